"""Terminal presentation of a `clients` run: each client's version and settings (or why it did not run), and the
library to use per job with the code it stands for (`recommend`)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape

from sshbench.analyse.claims.clients import SETTING_JOBS, Effect, Pick
from sshbench.clienttypes import client_type, known
from sshbench.model import Scenario
from sshbench.ratios import Word, interval_name
from sshbench.records import RunRecord
from sshbench.render import screen
from sshbench.units import format_value


def print_clients(console: Console, run: RunRecord) -> None:
    """Print each client: what it is, its version, its default settings and the second setting measured (named for
    what it changes), or why it was skipped."""
    clients = run.environment.clients
    if not clients:
        return
    screen.say(
        console, "Clients (default: as their users run them; then the one change measured, named):", style="bold"
    )
    for name, about in clients.items():
        if "skipped" in about:
            screen.say(console, f"  {name}: [dim]not measured[/]: {escape(about['skipped'])}", True)
            continue
        start = about.get("start_s")
        started = f"; starts and loads in {format_value('ms', float(start))} ms" if start else ""
        screen.say(console, f"  {name}: {about.get('version', '?')}{started}")
        screen.say(console, f"    default: {about.get('default', '')}")
        if "kex_offered" in about or "kex_negotiated" in about:
            screen.say(console, f"    key exchange: {_kex_line(about)}")
        row = known(name)
        if "tuned" in about:
            named = (row.setting if row else None) or "changed"
            screen.say(console, f"    {named}: {about['tuned']}")
        if about.get("kind") == "binary" and not (row and row.marks):
            screen.say(
                console, "    it says nothing when its command is sent: its CPU per GiB includes its login", style="dim"
            )


def _kex_line(about: dict[str, str]) -> str:
    """Return a client's key exchanges in words: what it offers first, how many it can be pinned to, what it gets."""
    offered = [k for k in about.get("kex_offered", "").split(",") if k]
    parts = [f"offers {offered[0]} first ({len(offered)} offered)"] if offered else []
    parts += [f"{about['kex_pinnable']} it can be pinned to"] if "kex_pinnable" in about else []
    parts += [f"negotiates {about['kex_negotiated']}"] if "kex_negotiated" in about else []
    return "; ".join(parts) or "not known"


def code_lines(sc: Scenario, group: str) -> list[str]:
    """Return the code a pick stands for: its connection (tuned where it was) and the call that did the job."""
    code, tuned = client_type(sc.client or "").code, sc.mode == "tuned"
    assert code is not None, f"{sc.client} is no library"
    lines = [code.connect.format(code.tuned_connect if tuned else "")]
    work = (dict(code.tuned_work).get(group) if tuned else None) or dict(code.work).get(group)
    if work:
        lines.append(work.format(code.sftp_tuned if tuned else ""))
    if sc.cipher:
        lines.append(f"# measured with the cipher pinned to {sc.cipher}; the library's own choice may differ")
    return lines


def _effect(e: Effect, named: bool = False) -> str:
    """Return one job's change by a setting, with its interval and verdict (`named`: the client has several rows
    of the job, each named by its cipher and server)."""
    job = SETTING_JOBS.get(e.group, e.group)
    if named:
        job += "".join(
            f" {w}" for w in (f"with {e.cipher}" if e.cipher else "", f"on {e.server}" if e.server else "") if w
        )
    v = e.verdict
    if v is None:
        return f"{job}: too few rounds paired with its default"
    low, high = (v.ratio.low - 1) * 100, (v.ratio.high - 1) * 100
    word = "slower: it hurts here" if v.word is Word.SLOWER else v.word.value
    return f"{job} {(v.ratio.value - 1) * 100:+.0f} % ({interval_name(v.ratio)} {low:+.0f} .. {high:+.0f} %, {word})"


def print_effects(console: Console, run: RunRecord, effects: Sequence[Effect]) -> None:
    """Print what each client's second setting did to each job against its defaults, and why where it hurts."""
    if not effects:
        return
    console.print(
        "What each change did against the same client's defaults (ratio of rates or times, paired per round):",
        style="bold",
        highlight=False,
    )
    for client in dict.fromkeys(e.client for e in effects):
        mine = [e for e in effects if e.client == client]
        row = known(client)
        named = (row.setting if row else None) or "its change"
        jobs = [e.group for e in mine]
        said = "; ".join(_effect(e, jobs.count(e.group) > 1) for e in mine)
        screen.say(console, f"  {client} ({named}): {said}")
        why = run.environment.clients.get(client, {}).get("hurts")
        if why and any(e.hurts for e in mine):
            screen.say(console, f"    why: {why}")


def print_picks(console: Console, run: RunRecord, picks: Sequence[Pick], language: str) -> None:
    """Print the library to use per job from a program in one language, each with its claim and its code lines."""
    if not picks:
        libs = {n: a for n, a in run.environment.clients.items() if a.get("language", "Python") == language}
        skipped = [f"{n}: {a['skipped']}" for n, a in libs.items() if "skipped" in a]
        why = (
            "no library was in this run"
            if not libs
            else f"no {language} library ran here ({'; '.join(skipped)})"
            if len(skipped) == len(libs)
            else f"no {language} library row was ranked (at least 3 samples)"
        )
        console.print(f"Nothing to recommend for {language}: {why}.", highlight=False, markup=False)
        return
    console.print(
        f"From a {language} program, on this host (the fastest {language} library measured, per job):",
        style="bold",
        highlight=False,
    )
    for p in picks:
        screen.say(console, f"  {p.claim().text}")
        for line in code_lines(p.row.scenario, p.group):
            console.print(f"      {line}", highlight=False, markup=False, style="cyan")
