"""Terminal presentation of discovery: client and server algorithm lists with ratings, and negotiation."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from sshbench.records import Discovery

RATING_STYLE = {"ok": "green", "ok, not post-quantum": "cyan", "warn": "yellow", "fail": "red", "unknown": "dim"}


def print_discovery(console: Console, disc: Discovery) -> None:
    """Print client/server algorithm lists with ratings, and what each profile negotiated."""
    if disc.server_error:
        console.print(f"[yellow]Server lists unavailable:[/] {disc.server_error}")
    offers = disc.server_lists()
    for kind, title in (("kex", "Key exchange"), ("hostkey", "Host key"), ("cipher", "Cipher"), ("mac", "MAC")):
        table = Table(title=f"{title} algorithms", title_justify="left")
        table.add_column("algorithm", no_wrap=True)
        for col in ("client", "server", "both", "rating", "notes"):
            table.add_column(col)
        client, offered = disc.client.get(kind, ()), offers.get(kind)
        for name, r in disc.ratings.get(kind, {}).items():
            in_c, in_s = name in client, (offered is not None and name in offered)
            style = RATING_STYLE.get(r.rating.value, "")
            table.add_row(
                name,
                "yes" if in_c else "",
                "?" if offered is None else ("yes" if in_s else ""),
                "yes" if in_c and in_s else "",
                f"[{style}]{r.rating}[/]",
                "; ".join(r.reasons),
            )
        console.print(table)
    print_negotiation(console, disc)
    console.print(
        f"Ratings: ssh-audit {disc.ssh_audit_version} algorithm database (github.com/jtesta/ssh-audit, MIT).",
        highlight=False,
    )


def print_negotiation(console: Console, disc: Discovery) -> None:
    """Print what the default and strict client profiles negotiated."""
    if disc.server is not None and disc.server.banner:
        console.print(f"Server: {disc.server.banner}", highlight=False)
    for p in disc.profiles:
        n = p.negotiated
        if n is None:
            console.print(f"{p.name:>8} profile: [red]fails to connect[/]: {p.failure}", highlight=False)
        else:
            console.print(
                f"{p.name:>8} profile: kex {n.kex}, host key {n.hostkey}, cipher {n.cipher}, "
                f"MAC {n.mac or '(implicit, AEAD)'}",
                highlight=False,
            )
