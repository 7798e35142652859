"""What a row changes from the default: a `tune` remedy (N connections at once, Compression=yes, a master
connection reused, a wider server window) or a `load` burst's second server's sshd_config options, as one typed
value, a scenario's `remedy` field.

Everything that differs by kind of remedy is its row (`ROWS`): its stored text form and parse, how it reads after a
row's name, the ssh options it adds, the bounds `tune` tries it against (and in which direction, for which payload),
the numbers it is tried at, the Bench service that stages it, and the lines or command a user is given. A new remedy
is one row (and a Bench service, where none of the present ones stages it)."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

MiB = 2**20
PATH = ("network", "ssh-window", "tcp-window")  # bounds of the path (model.BoundKind values): more data in flight
UNKNOWN = "unknown"  # below every known limit: the path's remedies are tried too


class RemedyKind(enum.StrEnum):
    """What a row changes."""

    STREAMS = "streams"  # the copy split over N connections at once (1: the default copy, as one connection)
    COMPRESSION = "compression"  # ssh -o Compression=yes
    MASTER = "master"  # logins through a master connection (ControlMaster/ControlPersist)
    WINDOW = "window"  # an embedded server's receive window widened to N bytes (Dropbear's -W)
    SSHD = "sshd"  # a `load` burst's second embedded OpenSSH with these sshd_config options

    @property
    def row(self) -> RemedyRow:
        """Return this kind's row."""
        return ROWS[self]


class Service(enum.StrEnum):
    """How a Bench stages a remedy (jobs/staging.Bench)."""

    COPIES = "copies"  # a copy over the remedy's connections with its ssh options (Bench.copies_at_once)
    MASTER = "master"  # logins through one master connection (Bench.through_master)
    WIDENED = "widened"  # a second embedded server with a wider receive window (Bench.widened; Bench.can_widen)
    CONFIGURED = "configured"  # a second embedded OpenSSH with sshd_config options (Bench.configured)


@dataclass(frozen=True)
class RemedyRow:
    """Everything that differs by kind of remedy (`{n}`: its number; `{mib}`: its number in MiB; `{options}`: its
    sshd_config options; `{host}`, `{get}`: the copy's host and `download`/`upload`)."""

    label: str  # how it reads after a row's name
    service: Service = Service.COPIES
    sized: bool = False  # carries a number: connections (streams) or bytes (window)
    sizes: tuple[int, ...] = ()  # the numbers `tune` tries it at (streams: at most the logins the server allows)
    ssh_options: tuple[tuple[str, str], ...] = ()  # ssh -o options it adds to a copy's command line
    answers: tuple[str, ...] = ()  # the bounds (model.BoundKind values) `tune` tries it against (none: not chosen)
    directions: tuple[str, ...] = ("down", "up")  # the directions it is tried in
    payloads: tuple[str, ...] | None = None  # the payloads it says something about (None: any)
    paste: tuple[str, ...] = ()  # the ssh_config lines that give it (measured as they are)
    command: str = ""  # else what to do, in words, and whether the command itself was measured
    command_measured: bool = True


ROWS: dict[RemedyKind, RemedyRow] = {
    RemedyKind.STREAMS: RemedyRow(
        label=" x {n} connections at once",
        sized=True,
        sizes=(2, 4, 8),
        answers=(*PATH, UNKNOWN),
        command="split the copy into {n} parts and move them over {n} connections at once (measured: {n} ssh "
        "sessions at once to {host}, each carrying 1/{n} of the bytes, handshakes included); e.g. for a {get}: "
        "`rsync` or `scp` per part in the background, then `wait`",
        command_measured=False,
    ),
    RemedyKind.COMPRESSION: RemedyRow(  # zeros say nothing of a user's data, random can't shrink
        label=" with Compression=yes",
        ssh_options=(("Compression", "yes"),),
        answers=PATH,
        payloads=("text",),
        paste=("Compression yes",),
    ),
    RemedyKind.MASTER: RemedyRow(
        label=" reusing a master connection",
        service=Service.MASTER,
        paste=("ControlMaster auto", "ControlPath ~/.ssh/cm-%C", "ControlPersist 10m"),
    ),
    RemedyKind.WINDOW: RemedyRow(  # the server's window, receiving: an upload
        label=" with the server's receive window at {mib:g} MiB",
        service=Service.WIDENED,
        sized=True,
        sizes=(8 * MiB,),  # an embedded Dropbear's receive window (-W): 4 times OpenSSH's channel window
        answers=("ssh-window", "tcp-window", UNKNOWN),
        directions=("up",),
        command="start dropbear with -W {n} (its receive window, in bytes)",
    ),
    RemedyKind.SSHD: RemedyRow(label=" with {options}", service=Service.CONFIGURED),
}


@dataclass(frozen=True)
class Remedy:
    """A row's change from the default: its kind, a count or a size where it has one, or sshd_config options."""

    kind: RemedyKind
    n: int = 0  # connections (streams) or bytes (window)
    options: tuple[str, ...] = ()  # sshd_config options, `MaxStartups=10:30:60` (sshd)
    copy: int = 0  # `tune`'s check of a prediction: copies of this many bytes (0: the run's sized copies)

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

    def checking(self, size: int) -> Remedy:
        """Return this remedy on copies of `size` bytes: the row that checks a gain predicted for that size."""
        return dataclasses.replace(self, copy=size)

    @property
    def row(self) -> RemedyRow:
        """Return its kind's row."""
        return self.kind.row

    @property
    def connections(self) -> int:
        """Return how many connections a copy with this remedy uses (what a copy's share of the time is sized by)."""
        return self.n if self.kind is RemedyKind.STREAMS else 1

    @property
    def text(self) -> str:
        """Return the stored form: `streams=4`, `compression`, `master`, `window=8388608`, `sshd:K=V;K=V`; a check's
        copy size after `@` (`streams=4@10000000`)."""
        if self.copy:
            return f"{dataclasses.replace(self, copy=0).text}@{self.copy}"
        if self.row.sized:
            return f"{self.kind}={self.n}"
        if self.row.service is Service.CONFIGURED:
            return f"{self.kind}:{';'.join(self.options)}"
        return str(self.kind)

    def __str__(self) -> str:
        """Return the stored form (a scenario's key prints it)."""
        return self.text

    def _words(self, template: str, **more: str) -> str:
        """Return a row's template filled with this remedy's values."""
        return template.format(n=self.n, mib=self.n / MiB, options=", ".join(self.options), **more)

    @property
    def label(self) -> str:
        """Return how the remedy reads after a row's name (` x 4 connections at once`)."""
        if self.copy:
            return f"{dataclasses.replace(self, copy=0).label}, {self.copy / 1e6:g} MB copies"
        if self == ONE_CONNECTION:
            return " (one connection)"
        return self._words(self.row.label)

    def given(self, host: str, direction: str | None) -> tuple[tuple[str, ...], str, bool]:
        """Return the ssh_config lines or the command that give it (to `host`, one way), and whether they themselves
        were measured."""
        if self.row.paste:
            return self.row.paste, "", True
        get = "download" if direction == "down" else "upload"
        return (), self._words(self.row.command, host=host, get=get), self.row.command_measured

    @classmethod
    def parse(cls, text: str) -> Remedy:
        """Return the remedy a stored form names; ValueError for any other text."""
        text, at, copy = text.partition("@")
        if at:
            if not copy.isdigit() or int(copy) <= 0:
                raise ValueError(f"not a remedy: {text}@{copy!r}")
            return cls.parse(text).checking(int(copy))
        name, colon, options = text.partition(":")
        if colon:  # `sshd:K=V;K=V`
            kind = _kind(name, text)
            if kind.row.service is not Service.CONFIGURED:
                raise ValueError(f"not a remedy: {text!r}")
            return cls(kind, options=tuple(options.split(";")))
        name, _, n = text.partition("=")
        kind = _kind(name, text)
        if kind.row.sized != bool(n) or kind.row.service is Service.CONFIGURED or not (n.isdigit() or not n):
            raise ValueError(f"not a remedy: {text!r}")
        return cls(kind, int(n) if n else 0)


def _kind(name: str, text: str) -> RemedyKind:
    """Return the kind a stored form names; ValueError naming the whole text for any other."""
    try:
        return RemedyKind(name)
    except ValueError:
        raise ValueError(f"not a remedy: {text!r}") from None


COMPRESSION = Remedy(RemedyKind.COMPRESSION)
MASTER = Remedy(RemedyKind.MASTER)
ONE_CONNECTION = Remedy.streams(1)  # `tune`'s default copy: what every gain is read against


def tried(bound: str, direction: str, payload: str, most: int | None, widen: bool) -> list[Remedy]:
    """Return the remedies `tune` tries against a copy one way bound by `bound`: each row that answers it, in this
    direction and payload, at each of its numbers (streams: at most `most` connections, None: any); `widen`: the
    server can be given a wider window (a row staged by a server of its own needs it)."""
    out: list[Remedy] = []
    for kind, row in ROWS.items():
        if bound not in row.answers or direction not in row.directions:
            continue
        if (row.payloads is not None and payload not in row.payloads) or (row.service is Service.WIDENED and not widen):
            continue
        made = [Remedy(kind, n) for n in row.sizes] if row.sized else [Remedy(kind)]
        out += [r for r in made if most is None or r.connections <= most]
    return out


def label(remedy: Remedy | None) -> str:
    """Return how a row's remedy reads after its name (empty for none)."""
    return "" if remedy is None else remedy.label


def widens(remedy: Remedy | None) -> bool:
    """Return True for a remedy staged on a server of its own with a wider window."""
    return remedy is not None and remedy.row.service is Service.WIDENED


def ssh_options(remedy: Remedy | None) -> dict[str, str]:
    """Return the ssh -o options a remedy adds to a copy's command line."""
    return {} if remedy is None else dict(remedy.row.ssh_options)
