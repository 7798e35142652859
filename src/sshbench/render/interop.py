"""An interop soak as tables and sentences, and as its part of the JSON document (analyse/interop.py computes).
Never computes a bound itself."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from sshbench import hints, products
from sshbench.analyse.interop import RARE, Pair, logins_to_bound, pairs
from sshbench.clienttypes import known
from sshbench.exact import CONFIDENCE
from sshbench.joboptions import ClientsOptions
from sshbench.model import client_name
from sshbench.records import StoredRun, StoredScenario
from sshbench.render import screen
from sshbench.render.header import print_page, print_unfinished
from sshbench.render.layout import Column, print_fitted

HOW = (
    "  A login: connect, verify the host key, authenticate with a key, run `true`, close. Each server saw one login "
    "at a time, its pairs in a fresh random order every round; a library logged in from one warm process (ms: its "
    "own clock), ssh and dbclient as a process per login (ms: spawn to exit). Bound: the one-sided 95 % "
    "Clopper-Pearson upper limit of the failure rate."
)


def _pct(rate: float) -> str:
    """Return a rate as a percentage with sense for small ones."""
    return f"{rate * 100:.2g} %" if rate < 0.001 else f"{rate * 100:.1f} %"


def _kex(p: Pair) -> str:
    """Return a pair's key exchange, or that the client chose its own."""
    return p.kex or "(its own)"


def _needed(p: Pair) -> str:
    """Return the logins that would bound the pair at the rate worth finding."""
    if p.needed is None:
        return f"never (it fails {_pct(p.rate)})"
    return "bounded" if p.needed <= p.logins else f"{p.needed:,}"


def short_names(rows: Sequence[Pair]) -> dict[str, str]:
    """Return a short name for each server given by path (`sshd=/a/long/path` -> `sshd#1`), for the table."""
    by_path = [s for s in dict.fromkeys(p.server for p in rows) if "=" in s]
    return {s: f"{s.partition('=')[0]}#{i}" for i, s in enumerate(by_path, 1)}


def _columns(rows: Sequence[Pair]) -> list[Column]:
    """Return the soak table's columns (the host key's only when one was pinned; the logins that would bound a pair
    only where pairs differ in it, else the summary says it once)."""
    short = short_names(rows)
    cols = [
        Column("client", tuple(client_name(p.client, "in-process" if p.warm else None) for p in rows)),
        Column("server", tuple(short.get(p.server, p.server) for p in rows)),
        Column("key exchange", tuple(_kex(p) for p in rows), fold=True),
    ]
    if any(p.hostkey for p in rows):
        cols.append(Column("host key", tuple(p.hostkey or "(its own)" for p in rows), fold=True))
    cols += [
        Column("logins", tuple(str(p.logins) for p in rows), right=True),
        Column("failed", tuple(f"[red]{p.failures}[/red]" if p.failures else "0" for p in rows), right=True),
        Column("failure rate (95% bound)", tuple(f"at most {_pct(p.upper)}" for p in rows), right=True),
    ]
    needed = tuple(_needed(p) for p in rows)
    if len(set(needed)) > 1:
        cols.append(Column(f"logins to bound at {_pct(RARE)}", needed, right=True, shed=2))
    medians = tuple("" if p.median_ms is None else f"{p.median_ms:.1f}" for p in rows)
    return [*cols, Column("median ms", medians, right=True, shed=1)]


def reproduce(p: Pair, ssh: str | None, db: bool = True, rekey: int | None = None) -> str:
    """Return the command that soaks one failing pair again (it starts the same embedded server afresh; `ssh`: the
    OpenSSH client the run was given, None for the system's; `rekey`: the soak's RekeyLimit)."""
    words = ["interop", "--client", p.client, "--server", f"local:{p.server}", *(["--ssh", ssh] if ssh else [])]
    words += ["--rekey", str(rekey)] if rekey else []
    words += ["--kex", p.kex] if p.kex else []
    words += ["--hostkey", p.hostkey] if p.hostkey else []
    return hints.sshbench(*words, "--logins", str(max(p.logins, 100)), db=db)


def by_hand(p: Pair, ssh: str | None) -> str:
    """Return the shape of one login outside sshbench, against the same server (PORT, KEY and FILE: its own)."""
    row = known(p.client)
    if row is not None and row.by_hand is not None:
        pins = f"-o KexAlgorithms={p.kex} " if p.kex else ""
        pins += f"-o HostKeyAlgorithms={p.hostkey} " if p.hostkey else ""
        return row.by_hand.format(ssh=ssh or "ssh", pins=pins)
    pin = f" --kex {p.kex}" if p.kex else ""
    pin += f" --hostkey {p.hostkey}" if p.hostkey else ""
    return (
        f"python -m sshbench.clients.drivers.{p.client}_driver --port PORT --key KEY --known-hosts FILE{pin} connect 1"
    )


def known_cause(p: Pair) -> str | None:
    """Return a failing pair's cause where the client's and the server's rows name it (a session's channel open
    left unanswered behind an SSH_MSG_IGNORE), else None."""
    client, server = known(p.client), products.named_in(p.server)
    hung = any("did not open the session" in words or "no answer within" in words for words, _ in p.errors)
    if client is None or server is None or not (hung and client.sends_ignore and server.ignore_fault):
        return None
    return (
        f"{server.ignore_fault}; {client.sends_ignore}: the server's fault, not the client's nor the wait's (with "
        "the IGNORE left out, no login hung)"
    )


def print_failures(console: Console, rows: Sequence[Pair], ssh: str | None, rekey: int | None = None) -> None:
    """Print each failing pair: how often, the client's words, and the commands that reproduce it."""
    for p in (p for p in rows if p.failures):
        key = f" and host key {p.hostkey}" if p.hostkey else ""
        screen.say(
            console,
            f"  ! {p.client} on {p.server} with {_kex(p)}{key}: {p.failures} of {p.logins} logins failed "
            f"({_pct(p.rate)})",
        )
        for words, n in p.errors[:3]:
            screen.say(console, f"      {n} x {words}")
        if len(p.errors) > 3:
            screen.say(console, f"      and {len(p.errors) - 3} other messages")
        why = known_cause(p)
        if why:
            screen.say(console, f"      why: {why}")
        again = reproduce(p, ssh, rekey=rekey)
        console.print(f"      again: {again}", highlight=False, markup=False, soft_wrap=True)  # pasted
        console.print(
            f"      by hand, against a server like it that you start (its PORT, your KEY, a known_hosts FILE with its "
            f"host key; the soak's own server is gone): {by_hand(p, ssh)}",
            highlight=False,
            markup=False,
            style="dim",
            soft_wrap=True,
        )


def not_soaked(na: Sequence[StoredScenario]) -> list[str]:
    """Return one line per client and reason for the pairs not soaked, naming their servers and how many."""
    grouped: dict[tuple[str, str], list[StoredScenario]] = {}
    for st in na:
        grouped.setdefault((st.scenario.client or "every client", st.failure or ""), []).append(st)
    lines = []
    for (client, why), sts in grouped.items():
        servers = ", ".join(dict.fromkeys(st.scenario.server or "" for st in sts))
        count = f" ({len(sts)} pairs)" if len(sts) > 1 else ""
        lines.append(f"  n/a: {client} on {servers}{count}: {why.removeprefix('unsupported: ')}")
    return lines


def _pairs(n: int) -> str:
    """Return `1 pair` or `N pairs`."""
    return f"{n} pair{'s' if n != 1 else ''}"


def summary(rows: Sequence[Pair]) -> list[str]:
    """Return the soak in sentences: logins, failures, and what the clean pairs bound."""
    logins = sum(p.logins for p in rows)
    failing = [p for p in rows if p.failures]
    clean = [p for p in rows if not p.failures and p.logins]
    failed = sum(p.failures for p in rows)
    lines = [
        f"  {_pairs(len(rows))}, {logins:,} logins, {failed:,} failed"
        + (f" in {_pairs(len(failing))}" if failing else "")
    ]
    if clean:
        worst = max(clean, key=lambda p: p.upper)
        lines.append(
            f"  {_pairs(len(clean))} never failed: each failure rate is at most "
            f"{_pct(worst.upper)} ({CONFIDENCE:.0%} bound after {worst.logins} logins); to bound it at "
            f"{_pct(RARE)} (about one handshake in {round(1 / RARE)}) each needs {logins_to_bound(0, 1):,} logins "
            f"(--logins {logins_to_bound(0, 1)})"
        )
    return lines


def clients_line(stored: StoredRun) -> str | None:
    """Return the soak's clients with their versions (and the ones not here, with why), in one line."""
    clients = stored.run.environment.clients
    if not clients:
        return None
    here = [f"{name} ({about['version']})" for name, about in clients.items() if "version" in about]
    gone = [f"{name}: {about['skipped']}" for name, about in clients.items() if "skipped" in about]
    return "  clients: " + ", ".join(here) + (f"; not here: {'; '.join(gone)}" if gone else "")


def rekey_lines(stored: StoredRun) -> list[str]:
    """Return what a rekey soak set and what its checked login did on each server (nothing for another soak)."""
    own = stored.run.options.own_as(ClientsOptions)
    if not own.rekey:
        return []
    checked = stored.run.environment.rekeys
    return [
        f"  rekey soak: RekeyLimit {own.rekey:,} bytes on each OpenSSH server and on ssh (the libraries rekey when "
        f"the server asks); every login moves {own.payload:,} bytes from the server (ForceCommand head -c "
        f"{own.payload} /dev/zero, in place of `true`)",
        *(f"    {server}: {words}" for server, words in checked.items()),
    ]


def print_interop(console: Console, stored: StoredRun) -> None:
    """Print the soak's clients, table, failures, n/a pairs and what it bounds."""
    if line := clients_line(stored):
        screen.say(console, line)
    for line in rekey_lines(stored):
        screen.say(console, line)
    rows = pairs(soaked(stored))
    na = [st for st in stored.scenarios if st.failure is not None and not st.samples]
    logins = stored.run.options.plan.min_rounds
    listed = [p for p in rows if p.failures] if screen.brief() else rows
    if listed:
        print_fitted(console, f"Interop soak: {logins} full logins per pair", _columns(listed))
        for server, name in short_names(listed).items():
            screen.say(console, f"  {name}: local:{server}")
    if len(listed) < len(rows):
        screen.say(console, f"  {_pairs(len(rows) - len(listed))} without a failure not listed (--details lists them)")
    limit = stored.run.options.own_as(ClientsOptions).rekey
    print_failures(console, rows, stored.run.options.ssh, limit)
    for line in not_soaked(na):
        screen.say(console, line, style="dim")
    for line in summary(rows):
        screen.say(console, line)
    screen.say(console, HOW, style="dim")


def print_interop_run(console: Console, stored: StoredRun, db: Path, discovery_only: bool = False) -> None:
    """Print an interop run: its header, the soak, then where it is stored."""
    print_page(console, stored, db, print_interop, lambda c, s: print_unfinished(c, s.run))


def soaked(stored: StoredRun) -> list[StoredScenario]:
    """Return the pairs that were soaked (not the ones marked n/a)."""
    return [st for st in stored.scenarios if st.failure is None or st.samples]


def interop_document(stored: StoredRun) -> dict[str, Any]:
    """Return the soak's part of the JSON document: every pair with its counts, words and bound."""
    own = stored.run.options.own_as(ClientsOptions)
    limit = own.rekey
    doc: dict[str, Any] = {}
    if limit:
        doc["rekey"] = {"limit": limit, "payload": own.payload, "checked": stored.run.environment.rekeys}
    return doc | {
        "confidence": CONFIDENCE,
        "rare_rate": RARE,
        "pairs": [
            {
                "client": p.client,
                "server": p.server,
                "kex": p.kex,
                "hostkey": p.hostkey,
                "warm_process": p.warm,
                "logins": p.logins,
                "failures": p.failures,
                "failure_rate_upper": p.upper,
                "logins_to_bound_rare": p.needed,
                "median_ms": p.median_ms,
                "errors": [{"message": m, "count": n} for m, n in p.errors],
                "reproduce": reproduce(p, stored.run.options.ssh, db=False, rekey=limit) if p.failures else None,
            }
            for p in pairs(soaked(stored))
        ],
    }
