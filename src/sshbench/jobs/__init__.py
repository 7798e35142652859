"""Measuring jobs: each stages its endpoints, link and limits in one step (`staging.stage`, which yields the
`Bench` every sample is taken through), discovers, plans and schedules through one `Recording` (the run's life
cycle in the store). `run` runs the job its kind's row names (runkinds.ROWS)."""

from __future__ import annotations

from sshbench.jobs.recording import Job
from sshbench.runkinds import entry

__all__ = ["Job", "run"]


def run(job: Job) -> int:
    """Run (or resume) the job; return the run id."""
    run_id: int = entry(job.opts.command.row.job)(job)
    return run_id
