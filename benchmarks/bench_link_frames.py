"""How often the link check passes with each largest frame (root): build and check one link N times per MTU.

    sudo .venv/bin/python benchmarks/bench_link_frames.py [--link 500mbit,30ms] [--checks 10] [--mtus 65000 9000]

Each check is `--link`'s own (linkcheck.verified); only the link's largest frame differs (netns.JUMBO, set in this
process). A refused check prints the rates it measured.
"""

from __future__ import annotations

import argparse

from sshbench.errors import SshbenchError
from sshbench.targets.link import linkcheck, links, netns


def checks(link: str, count: int, mtu: int) -> tuple[int, list[str]]:
    """Return how many of `count` checks passed with frames of at most `mtu` bytes, and the refusals' words."""
    netns.JUMBO = mtu  # mtu_for's cap, read at each call
    spec, passed, refused = links.parse(link), 0, []
    for _ in range(count):
        try:
            with linkcheck.verified(spec):
                passed += 1
        except SshbenchError as refusal:
            refused.append(str(refusal).split(": ", 1)[-1].split(" (checked")[0])
    return passed, refused


def main() -> None:
    """Print a row per MTU: checks passed, and what each refused one measured."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--link", default="500mbit,30ms")
    parser.add_argument("--checks", type=int, default=10)
    parser.add_argument("--mtus", type=int, nargs="+", default=[65000, 9000])
    args = parser.parse_args()
    print("| largest frame | checks passed | refused (what each measured) |\n|---|---:|---|")
    for mtu in args.mtus:
        passed, refused = checks(args.link, args.checks, mtu)
        print(f"| {mtu} bytes | {passed} of {args.checks} | {'; '.join(refused) or 'none'} |", flush=True)


if __name__ == "__main__":
    main()
