"""Security policies: which algorithms a recommendation may use, and why each excluded one is excluded.

Built-in levels rest on ssh-audit's algorithm database (through `ssh.audit.rate`, the one place this
reading-side module reaches into the measuring side):
  any           every algorithm;
  compatible    drops what ssh-audit fails (broken or deprecated: 3DES, SHA-1, MD5, 1024-bit DH, NIST curves);
  modern        also drops what it warns about (CBC, encrypt-and-MAC, 64-bit tags, 2048-bit DH) and unrated names;
  post-quantum  modern, with post-quantum hybrid key exchanges only.
"Not post-quantum" is not a weakness: curve25519-sha256 passes `modern`; only `post-quantum` drops it.

A policy file (TOML) starts from a level and allows or denies named algorithms with a reason:

    base = "modern"
    [deny.cipher]
    "aes256-ctr" = "we standardise on AES-128"
    [allow.mac]
    "umac-64-etm@openssh.com" = "accepted for bulk transfers on the backup network"
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sshbench import kex
from sshbench.discovery import Rating
from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh import audit

LEVELS = ("any", "compatible", "modern", "post-quantum")
KINDS = ("kex", "hostkey", "cipher", "mac")


@dataclass(frozen=True)
class Verdict:
    """Whether a policy allows one algorithm, and why not."""

    allowed: bool
    reason: str = ""


@dataclass(frozen=True)
class Policy:
    """A level plus explicit allow/deny entries (kind -> algorithm -> reason)."""

    name: str
    level: str
    allow: dict[str, dict[str, str]] = field(default_factory=dict)
    deny: dict[str, dict[str, str]] = field(default_factory=dict)

    def check(self, kind: str, algorithm: str) -> Verdict:
        """Return whether the algorithm passes this policy, with the reason when it does not."""
        if algorithm in self.deny.get(kind, {}):
            return Verdict(False, f"denied by {self.name}: {self.deny[kind][algorithm]}")
        if algorithm in self.allow.get(kind, {}):
            return Verdict(True)
        return level_verdict(self.level, kind, algorithm)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready description (stored with recommendations)."""
        return {"name": self.name, "level": self.level, "allow": self.allow, "deny": self.deny}


def level_verdict(level: str, kind: str, algorithm: str) -> Verdict:
    """Apply a built-in level to one algorithm using ssh-audit's rating."""
    if level == "any":
        return Verdict(True)
    r = audit.rate(kind, algorithm)
    why = "; ".join(r.reasons) or r.rating.value
    if r.rating is Rating.FAIL:
        return Verdict(False, f"ssh-audit fails it: {why}")
    if level == "compatible":
        return Verdict(True)
    if r.rating is Rating.WARN:
        return Verdict(False, f"ssh-audit warns: {why} (allowed by --policy compatible)")
    if r.rating is Rating.UNKNOWN:
        return Verdict(False, "not rated by ssh-audit (allowed by --policy compatible)")
    if level == "post-quantum" and kind == "kex" and not kex.is_post_quantum(algorithm):
        return Verdict(False, "not post-quantum (allowed by --policy modern)")
    return Verdict(True)


def builtin(level: str) -> Policy:
    """Return a built-in level as a policy."""
    if level not in LEVELS:
        raise SshbenchError(
            f"unknown policy level {level!r}",
            place="--policy",
            fix=f"use one of {', '.join(LEVELS)}, or a TOML policy file",
            code=ExitCode.USAGE,
        )
    return Policy(name=f"policy {level}", level=level)


def _entries(data: Any, section: str, path: Path) -> dict[str, dict[str, str]]:
    """Validate one [allow]/[deny] section: kind -> {algorithm: reason}."""
    out: dict[str, dict[str, str]] = {}
    if data is None:
        return out
    if not isinstance(data, dict):
        raise _file_error(path, f"[{section}] must be a table of kinds")
    for kind, entries in data.items():
        if kind not in KINDS:
            raise _file_error(path, f"[{section}.{kind}]: kind must be one of {', '.join(KINDS)}")
        if not isinstance(entries, dict) or not all(isinstance(v, str) for v in entries.values()):
            raise _file_error(path, f'[{section}.{kind}] must map algorithm names to reasons ("name" = "why")')
        unknown = [name for name in entries if audit.rate(kind, name).rating is Rating.UNKNOWN]
        if unknown:
            raise _file_error(
                path,
                f"[{section}.{kind}]: unknown {kind} {', '.join(map(repr, unknown))} (not in ssh-audit's "
                "database; `sshbench algos` lists the names)",
            )
        out[kind] = dict(entries)
    return out


def _file_error(path: Path, why: str) -> SshbenchError:
    """Return a policy-file error naming the file."""
    return SshbenchError(
        f"invalid policy file: {why}",
        place=str(path),
        fix="see `sshbench recommend --help` for the policy file format",
        code=ExitCode.USAGE,
    )


def load(path: Path) -> Policy:
    """Read a TOML policy file."""
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise _file_error(path, exc.strerror or str(exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise _file_error(path, str(exc)) from None
    level = data.get("base", "modern")
    if level not in LEVELS:
        raise _file_error(path, f"base = {level!r}: use one of {', '.join(LEVELS)}")
    unknown = set(data) - {"base", "allow", "deny"}
    if unknown:
        raise _file_error(path, f"unknown keys {', '.join(sorted(unknown))} (expected base, allow, deny)")
    return Policy(
        name=f"policy file {path.name}",
        level=level,
        allow=_entries(data.get("allow"), "allow", path),
        deny=_entries(data.get("deny"), "deny", path),
    )


def resolve(spec: str) -> Policy:
    """Return the policy for a --policy value: a level name or a path to a TOML file."""
    if spec in LEVELS:
        return builtin(spec)
    path = Path(spec)
    if path.suffix == ".toml" or path.exists():
        return load(path)
    return builtin(spec)
