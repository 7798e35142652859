"""Measuring jobs: each stages its endpoints, link and limits in one step (`staging.stage`, which yields the
`Bench` every sample is taken through), discovers, plans and schedules through one `Recording` (the run's life
cycle in the store). `run` picks the job for a run kind."""

from __future__ import annotations

from sshbench.jobs.clients import run_clients
from sshbench.jobs.fleet import run_fleet
from sshbench.jobs.recording import Job
from sshbench.jobs.servers import run_servers
from sshbench.jobs.single import run_job
from sshbench.jobs.tools import run_tools
from sshbench.jobs.tune import tune_job
from sshbench.model import RunKind

__all__ = ["Job", "run"]


def run(job: Job) -> int:
    """Run (or resume) the job; return the run id."""
    if job.opts.command is RunKind.FLEET:
        return run_fleet(job)
    if job.opts.command is RunKind.TOOLS:
        return run_tools(job)
    if job.opts.command is RunKind.CLIENTS:
        return run_clients(job)
    if job.opts.command is RunKind.TUNE:
        return tune_job(job)
    return run_servers(job) if job.opts.command.side_by_side else run_job(job)
