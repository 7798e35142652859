"""When a `load` step's logins should start: evenly spaced or with exponential gaps (Poisson), as offsets from the
step's start. Ground: the job keeps the schedule, the reading side counts what a step planned."""

from __future__ import annotations

import random

ARRIVALS = ("constant", "poisson")


def schedule(rate: float, seconds: float, arrivals: str, seed: int = 0) -> list[float]:
    """Return the intended start offsets of one step: `rate` per second for `seconds`, evenly spaced (constant) or
    with exponential gaps (Poisson, seeded so a resumed step repeats its schedule)."""
    if arrivals == "constant":
        return [i / rate for i in range(int(rate * seconds))]
    rng, t, out = random.Random(seed), 0.0, []
    while (t := t + rng.expovariate(rate)) < seconds:
        out.append(t)
    return out


def step_seed(run_seed: int, rate: float) -> int:
    """Return the seed of a step's Poisson schedule: the run's seed (stored with its plan) and the step's rate, so a
    resumed step, and the reading side counting what a step planned, get the same schedule."""
    return run_seed + int(rate * 1000)
