"""What a row changes from the default: a `tune` remedy (N connections at once, Compression=yes, a master
connection reused, a wider server window) or a `load` burst's second server's sshd_config options, as one typed
value, a scenario's `remedy` field, with its one stored text form, its one parse, and how it reads after a row's
name."""

from __future__ import annotations

import enum
from dataclasses import dataclass

MiB = 2**20


class RemedyKind(enum.StrEnum):
    """What a row changes."""

    STREAMS = "streams"  # the copy split over N connections at once (1: the default copy, as one connection)
    COMPRESSION = "compression"  # ssh -o Compression=yes
    MASTER = "master"  # logins through a master connection (ControlMaster/ControlPersist)
    WINDOW = "window"  # an embedded server's receive window widened to N bytes (Dropbear's -W)
    SSHD = "sshd"  # a `load` burst's second embedded OpenSSH with these sshd_config options


@dataclass(frozen=True)
class Remedy:
    """A row's change from the default: its kind, a count or a size where it has one, or sshd_config options."""

    kind: RemedyKind
    n: int = 0  # connections (streams) or bytes (window)
    options: tuple[str, ...] = ()  # sshd_config options, `MaxStartups=10:30:60` (sshd)

    @classmethod
    def streams(cls, connections: int) -> Remedy:
        """Return a copy over `connections` connections at once."""
        return cls(RemedyKind.STREAMS, connections)

    @classmethod
    def window(cls, size: int) -> Remedy:
        """Return a server receive window of `size` bytes."""
        return cls(RemedyKind.WINDOW, size)

    @classmethod
    def sshd(cls, options: tuple[str, ...]) -> Remedy:
        """Return a second server with these sshd_config options."""
        return cls(RemedyKind.SSHD, options=tuple(options))

    @property
    def connections(self) -> int:
        """Return how many connections a copy with this remedy uses."""
        return self.n if self.kind is RemedyKind.STREAMS else 1

    @property
    def text(self) -> str:
        """Return the stored form: `streams=4`, `compression`, `master`, `window=8388608`, `sshd:K=V;K=V`."""
        if self.kind in (RemedyKind.STREAMS, RemedyKind.WINDOW):
            return f"{self.kind}={self.n}"
        if self.kind is RemedyKind.SSHD:
            return f"sshd:{';'.join(self.options)}"
        return str(self.kind)

    def __str__(self) -> str:
        """Return the stored form (a scenario's key prints it)."""
        return self.text

    @property
    def label(self) -> str:
        """Return how the remedy reads after a row's name (` x 4 connections at once`)."""
        if self.kind is RemedyKind.STREAMS:
            return " (one connection)" if self.n == 1 else f" x {self.n} connections at once"
        if self.kind is RemedyKind.WINDOW:
            return f" with the server's receive window at {self.n / MiB:g} MiB"
        if self.kind is RemedyKind.SSHD:
            return f" with {', '.join(self.options)}"
        return " with Compression=yes" if self.kind is RemedyKind.COMPRESSION else " reusing a master connection"

    @classmethod
    def parse(cls, text: str) -> Remedy:
        """Return the remedy a stored form names; ValueError for any other text."""
        if text.startswith("sshd:"):
            return cls.sshd(tuple(text.removeprefix("sshd:").split(";")))
        kind, _, n = text.partition("=")
        try:
            remedy = cls(RemedyKind(kind), int(n) if n else 0)
        except ValueError:
            raise ValueError(f"not a remedy: {text!r}") from None
        if (remedy.kind in (RemedyKind.STREAMS, RemedyKind.WINDOW)) != bool(n):
            raise ValueError(f"not a remedy: {text!r}")
        return remedy


COMPRESSION = Remedy(RemedyKind.COMPRESSION)
MASTER = Remedy(RemedyKind.MASTER)
ONE_CONNECTION = Remedy.streams(1)  # `tune`'s default copy: what every gain is read against


def label(remedy: Remedy | None) -> str:
    """Return how a row's remedy reads after its name (empty for none)."""
    return "" if remedy is None else remedy.label


def widens(remedy: Remedy | None) -> bool:
    """Return True for a remedy that widens the server's window (it needs a server of its own)."""
    return remedy is not None and remedy.kind is RemedyKind.WINDOW
