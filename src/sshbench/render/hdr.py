"""`export --format hgrm`: a load run's steps in HdrHistogram's own formats, for the tools that read them: each
step's percentile distribution as `.hgrm` text (what HdrHistogram's plotter reads; values in ms), and every step's
histogram encoded, in step order, in one `.hlog` (HdrHistogram's interval log, values in us; a step's interval is
its place in the run, `--step-time` long), which its readers decode. A step's logins are those of its latest
attempt, successful, from each login's intended start: the histogram the step table's percentiles come from."""

from __future__ import annotations

import io
import re

from hdrh.log import HistogramLogWriter

from sshbench.analyse.load import histogram
from sshbench.joboptions import LoadOptions
from sshbench.loadwords import latest
from sshbench.records import StoredRun, StoredScenario
from sshbench.remedy import label

US_PER_MS = 1000.0  # the histograms hold microseconds; .hgrm says milliseconds
LOG = "steps.hlog"


def file_stem(st: StoredScenario) -> str:
    """Return a step's file name without its suffix: `20-per-s`, `burst-60-with-maxstartups-10-30-60`."""
    words = f"{st.scenario.load}{label(st.scenario.remedy)}".replace("/s", " per s").lower()
    return re.sub(r"[^a-z0-9]+", "-", words).strip("-")


def steps(stored: StoredRun) -> list[tuple[StoredScenario, list[float]]]:
    """Return each step of a load run with its successful logins' seconds (steps without one left out)."""
    out = []
    for st in stored.scenarios:
        if st.scenario.load is None:
            continue
        seconds = [s.value for s in latest([s for s in st.samples if not s.warmup]) if s.ok and s.value is not None]
        if seconds:
            out.append((st, seconds))
    return out


def to_hgrm(stored: StoredRun) -> dict[str, str]:
    """Return `<step>.hgrm` per step and the run's `steps.hlog` (none for a run without load steps)."""
    files: dict[str, str] = {}
    log = io.StringIO()
    writer = HistogramLogWriter(log)
    writer.output_log_format_version()
    writer.output_comment(f"[sshbench run {stored.run.id}: {stored.run.kind}, {stored.run.target}; values in us]")
    writer.output_legend()
    length = stored.run.options.own_as(LoadOptions).step_time
    for i, (st, seconds) in enumerate(steps(stored)):
        h = histogram(seconds)
        text = io.BytesIO()
        h.output_percentile_distribution(text, US_PER_MS)
        files[f"{file_stem(st)}.hgrm"] = text.getvalue().decode()
        writer.output_comment(f"[step {i + 1}: {st.scenario.load}{label(st.scenario.remedy)}]")
        writer.output_interval_histogram(h, i * length, (i + 1) * length, US_PER_MS)
    if files:
        files[LOG] = log.getvalue()
    return files
