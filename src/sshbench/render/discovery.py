"""Terminal presentation of discovery: client and server algorithm lists with ratings, and negotiation."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from sshbench.discovery import Discovery
from sshbench.render import screen
from sshbench.render.layout import Column, build, fit

RATING_STYLE = {"ok": "green", "ok, not post-quantum": "cyan", "warn": "yellow", "fail": "red", "unknown": "dim"}
RATING_WORD = {"ok, not post-quantum": "ok, no PQ", "unknown": "unrated"}


def algorithm_columns(disc: Discovery, kind: str, notes: dict[str, int]) -> list[Column]:
    """Return one kind's algorithms: who offers them, the rating, and numbered notes (collected in `notes`)."""
    client, offered = disc.client.get(kind, ()), disc.server_lists().get(kind)
    rows = list(disc.ratings.get(kind, {}).items())
    ratings = []
    for _, r in rows:
        refs = "".join(f"[{notes.setdefault(reason, len(notes) + 1)}]" for reason in r.reasons)
        style = RATING_STYLE.get(r.rating.value, "")
        ratings.append(f"[{style}]{RATING_WORD.get(r.rating.value, r.rating.value)}[/] {escape(refs)}".rstrip())
    both = tuple("yes" if n in client and offered is not None and n in offered else "" for n, _ in rows)
    return [
        Column("algorithm", tuple(n for n, _ in rows), fold=True),
        Column("client", tuple("yes" if n in client else "" for n, _ in rows)),
        Column("server", tuple("?" if offered is None else ("yes" if n in offered else "") for n, _ in rows)),
        Column("both", both),
        Column("rating [notes]", tuple(ratings)),
    ]


def print_discovery(console: Console, disc: Discovery) -> None:
    """Print client/server algorithm lists with ratings (notes under each table), and what each profile negotiated."""
    if disc.server_error:
        console.print(f"[yellow]Server lists unavailable:[/] {disc.server_error}")
    for kind, title in (("kex", "Key exchange"), ("hostkey", "Host key"), ("cipher", "Cipher"), ("mac", "MAC")):
        notes: dict[str, int] = {}
        shown, _ = fit(algorithm_columns(disc, kind, notes), console.width)
        console.print(f"{title} algorithms", style="bold", highlight=False)
        console.print(build(shown))
        for reason, number in notes.items():
            screen.say(console, f"  [{number}] {reason}")  # wrapped under its first word, a URL whole
    print_negotiation(console, disc)
    console.print(
        f"Ratings: ssh-audit {disc.ssh_audit_version} algorithm database (github.com/jtesta/ssh-audit, MIT).",
        highlight=False,
    )


def print_negotiation(console: Console, disc: Discovery) -> None:
    """Print what the default and strict client profiles negotiated (the brief screen: the default's, and the
    strict profile only where it fails to connect, under one title; the server's version left to the header)."""
    if screen.brief():
        console.print("Negotiated by the client's default profile (kex / host key / cipher + MAC):", highlight=False)
    elif disc.server is not None and disc.server.banner:
        console.print(f"Server: {disc.server.banner}", highlight=False)
    for p in disc.profiles:
        n = p.negotiated
        if screen.brief() and n is not None and p.name != "default":  # the strict profile's: --details
            continue
        name = f"  {p.name}:" if screen.brief() else f"{p.name:>8} profile:"
        if n is None:
            screen.say(console, f"{name} [red]fails to connect[/]: {escape(p.failure or '')}", True)
        elif screen.brief():
            mac = f" + {n.mac}" if n.mac else ""
            screen.say(console, f"{name} {n.kex} / {n.hostkey} / {n.cipher}{mac}")
        else:
            screen.say(
                console,
                f"{name} kex {n.kex}, host key {n.hostkey}, cipher {n.cipher}, MAC {n.mac or '(implicit, AEAD)'}",
            )
