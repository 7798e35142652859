"""Print what a `tune` run found: why each default is as fast as it is, what each remedy gained, what to paste."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console

from sshbench.analyse import tune
from sshbench.analyse.claims import bounds
from sshbench.analyse.sizes import CHECK_FACTOR, CHECK_SIZE, Check, size_words
from sshbench.payloads import text_ratio
from sshbench.ratios import DECIDING_PAIRS, Verdict, Word, interval_name
from sshbench.records import RunRecord, StoredScenario
from sshbench.render import screen
from sshbench.render.header import print_unfinished


def _percent(ratio: float) -> float:
    """Return a ratio's change in %, a change that rounds to 0 as +0 (never "-0 %")."""
    change = (ratio - 1) * 100
    return 0.0 if abs(change) < 0.5 else change


def _gain(r: tune.Remedy) -> str:
    """Return the remedy's change against the default, with its interval and verdict (or why there is none yet)."""
    v = r.verdict
    if v is None:
        return f"not told apart yet: too few rounds paired with the default ({DECIDING_PAIRS} are needed)"
    numbers = _opened(v, interval_name(v.ratio) + " ")  # the verdict's words close the parenthesis
    if not r.settled:
        more = max(DECIDING_PAIRS - v.ratio.n, v.more or 0)
        likely = f"; about {more} more round{'s' if more > 1 else ''} would likely decide" if more else ""
        return f"{numbers}, {v.ratio.n} rounds: not told apart yet{likely})"
    if v.word is Word.FASTER:
        return numbers + (
            ", faster: worth a change)"
            if r.helps
            else f", faster but within the ±{v.margin:.0%} margin: not worth a change)"
        )
    return f"{numbers}, {v.word.value})"


def _by_size(r: tune.Remedy, measured: int | None) -> list[str]:
    """Return the lines under a copy remedy: the copy measured (with --for-size) and its gain per copy size."""
    out = []
    if r.at_copy is not None and measured:
        out.append(f"on the copy measured ({size_words(measured)}): {_numbers(r.at_copy)}")
    said = [f"{size_words(size)} {_numbers(v) if v else 'too few rounds'}" for size, v in r.sizes]
    if said:
        out.append("by copy size, predicted from each copy's steady rate and fixed cost: " + "; ".join(said))
    if r.check is not None:
        out.append(_check_words(r.check))
    return out


def _unchecked(f: tune.Finding) -> bool:
    """Return True when a finding's copies were large enough for a check of its predictions and none was made."""
    large = (f.copy_bytes or 0) >= CHECK_FACTOR * CHECK_SIZE
    return large and any(r.sizes for r in f.remedies) and not any(r.check for r in f.remedies)


def _check_words(check: Check) -> str:
    """Return what copies of the check's size measured against the gain predicted for them."""
    size = size_words(check.size)
    if check.measured is None or check.predicted is None:
        return f"checked with {size} copies: too few rounds of them paired to read a gain"
    predicted = _percent(check.predicted.ratio.value)
    said = f"{size} copies measured in this run: {_numbers(check.measured)} against {predicted:+.0f} % predicted"
    if check.holds:
        return f"{said}: the prediction holds (inside the measured interval)"
    return f"{said}: a failed check (outside the measured interval): read the predicted sizes as rough"


def _opened(v: Verdict, name: str = "") -> str:
    """Return a gain and its interval, the parenthesis left open: +190 % (95 % interval +170 .. +205 %."""
    pct, low, high = (_percent(x) for x in (v.ratio.value, v.ratio.low, v.ratio.high))
    return f"{pct:+.0f} % ({name}{low:+.0f} .. {high:+.0f} %"


def _numbers(v: Verdict) -> str:
    """Return a gain and its interval: +190 % (+170 .. +205 %)."""
    return _opened(v) + ")"


RTTS = (("min RTT", "min_rtt_ms"), ("smoothed RTT", "rtt_ms"), ("receiver's RTT", "rcv_rtt_ms"))


def _rtts(evidence: Mapping[str, Any]) -> str:
    """Return the round trips the kernel saw: the path's (minimum) and the smoothed one (queues included)."""
    words = [
        f"{name} {float(v):.1f} ms" for name, key in RTTS if isinstance(v := evidence.get(key), int | float) and v > 0
    ]
    return ", ".join(words[:2]) or "no RTT read"


def print_tune(console: Console, run: RunRecord, stored: Sequence[StoredScenario]) -> None:
    """Print each group's default with its bound, the remedies best first, and the lines to paste."""
    found = tune.findings(run, stored)
    if not found:
        return
    screen.say(
        console,
        "Why, and what fixes it (each remedy measured against the default, paired per round):",
        style="bold",
    )
    payload = run.options.payload
    if payload == "text":
        screen.say(console, f"  payload: the fixed text corpus (gzip shrinks it {text_ratio():.2f} times)")
    elif payload in ("zero", "random"):
        screen.say(
            console,
            f"  payload: {'zeros (compress to nothing)' if payload == 'zero' else 'random (incompressible)'}",
        )
    for f in found:
        _print_finding(console, run, f)
    info = run.environment.master_conninfo
    if line := master_line(info):
        screen.say(console, line, style=None if info.get("check") == "agrees" else "bold")
    _print_paste(console, run, found)
    print_unfinished(console, run)


def master_line(info: Mapping[str, str]) -> str | None:
    """Return the master connection's own account (`ssh -O conninfo`) and its check, or None without one."""
    if not info:
        return None
    said = f"kex {info.get('kexalgorithm')}, cipher {info.get('cipher')}" + (
        f", MAC {info['mac']}" if info.get("mac") else ""
    )
    traffic = f"; traffic {info['traffic']}" if info.get("traffic") else ""
    check = info.get("check", "")
    if check == "agrees":
        return f"  master connection, by its own account (ssh -O conninfo): {said}{traffic}: as the default negotiates"
    return f"  ! master connection, by its own account (ssh -O conninfo): {said}{traffic}: {check}"


def _print_finding(console: Console, run: RunRecord, f: tune.Finding) -> None:
    """Print one group's default with its bound, its remedies best first, and what else it calls for."""
    metric = f.default.scenario.metric
    assert f.default.summary is not None and f.copy.summary is not None
    if f.group == "latency":
        line = f"  {f.group}: default {metric.format(f.default.summary.median)} {metric.unit} (a fresh login)"
    else:
        size = f" of {size_words(f.copy_bytes)}" if f.copy_bytes else ""
        steady = f"{metric.format(f.default.summary.median)} {metric.unit}"
        line = (
            f"  {f.group}: default {steady} steady (a copy{size} with its handshake: "
            f"{metric.format(f.copy.summary.median)} {metric.unit}, what remedies are compared with)"
        )
    if f.bound is not None:
        line += f": {bounds.describe(f.bound)}"
        evidence = f.bound.evidence
        if evidence.get("side"):
            line += f" [kernel, {evidence['side']}: {_rtts(evidence)}]"
    screen.say(console, line)
    for r in f.remedies:
        name = r.row.scenario.metric.labels.name(r.row.scenario).strip() or "default algorithms"
        given = run.options.for_size if r.at_copy is not None else None
        said = f" for a {size_words(given)} copy (predicted)" if given else ""
        screen.say(console, f"    {name}{said}: {_gain(r)}")
        for line in _by_size(r, f.copy_bytes):
            screen.say(console, f"      {line}")
    if _unchecked(f):
        screen.say(
            console,
            f"    the gains predicted per copy size were not checked: no {size_words(CHECK_SIZE)} copies were "
            "measured in this run (the budget left no time for them; a longer --max-time gives it)",
        )
    for words in f.advice:
        screen.say(console, f"    also: {words}")


def _print_paste(console: Console, run: RunRecord, found: Sequence[tune.Finding]) -> None:
    """Print the lines to paste (only what is worth a change), what they lose, and "keep it" or what is undecided."""
    pasted = tune.paste(found)
    if pasted["ssh_config"]:
        console.print("  ~/.ssh/config (measured here):", highlight=False)
        host = "your-server" if run.target.startswith("local") else run.target
        console.print(f"Host {host}", highlight=False, markup=False)
        for line in pasted["ssh_config"]:
            console.print(f"    {line}", highlight=False, markup=False)
    measured = tune.measured_commands(found)
    for command in pasted["commands"]:
        how = "on the server (measured here)" if command in measured else "instead of one copy"
        console.print(f"  {how}: {command}", highlight=False, markup=False)
    for loss in tune.losses(run, pasted):
        screen.say(console, f"  note: {loss}")
    open_ = tune.undecided(found)
    bare = [f.group for f in found if not f.remedies]
    if bare:
        screen.say(console, f"  no remedy measured yet for {', '.join(bare)}: nothing is pasted or kept from this run")
    elif open_:
        more = max(
            (max(DECIDING_PAIRS - r.verdict.ratio.n, r.verdict.more or 0) if r.verdict else DECIDING_PAIRS)
            for r in open_
        )
        screen.say(
            console,
            f"  not told apart yet: {len(open_)} remed{'ies' if len(open_) > 1 else 'y'} against the "
            f"default (about {more} more round{'s' if more > 1 else ''} would likely decide: raise "
            f"--max-time)",
        )
    elif not pasted["ssh_config"] and not pasted["commands"]:
        screen.say(
            console,
            f"  no remedy beats the default by more than the ±{run.options.margin:.0%} margin (each from "
            f"{DECIDING_PAIRS} rounds or more): keep it",
        )
    given = f" for a {size_words(run.options.for_size)} copy (--for-size)" if run.options.for_size else ""
    screen.say(
        console,
        f"  (pasted{given}: a gain whose whole 95 % interval lies beyond the ±{run.options.margin:.0%} margin, "
        f"from {DECIDING_PAIRS} rounds or more; --margin sets it)",
        style="dim",
    )
