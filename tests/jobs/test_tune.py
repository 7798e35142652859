"""`tune` and the kernel's evidence on hosts sshbench does not own: an OpenSSH server behind a shaped link in a
network namespace this test makes, reached as a *remote* host through an ssh_config alias (sshbench is not told
the link), and the embedded default."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import LINK_REFUSED, remote_config, sshbench_on_link
from sshbench.errors import SshbenchError
from sshbench.ratios import DECIDING_PAIRS
from sshbench.stats import median_ci_ranks
from sshbench.targets.link import linkcheck, links
from sshbench.targets.link.netns import EmulatedLink
from sshbench.targets.servers.openssh import OpenSSHServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]
LINKS = pytest.mark.skipif(
    os.geteuid() != 0 or not Path("/dev/net/tun").exists() or shutil.which("socat") is None,
    reason="a shaped link needs root, /dev/net/tun and socat",
)
PAIRED = pytest.mark.paired  # its rates are its link's (20-125 MB/s, little CPU) and it counts nothing machine-wide
GCM = "aes128-gcm@openssh.com"
WINDOW = 2 * 2**20
REMOTE_GCM = ("throughput", "testhost", "--cipher", GCM, "--ssh-config")  # then the ssh_config of the shaped host
THREE = ("--rounds", "3", "--max-rounds", "3")
SIX = ("--rounds", "6", "--max-rounds", "6")  # the fewest rounds a remedy's verdict is drawn from (DECIDING_PAIRS)
# 6 paired ratios' 96.9 % interval is their whole range, so one pair a stalled vCPU slowed makes a verdict
# inconclusive: a gain near its asserted size takes the fewest rounds whose interval leaves out the lowest ratio (9,
# from the 2nd to the 8th)
SPARED = next(n for n in range(DECIDING_PAIRS, 100) if median_ci_ranks(n)[0] > 1)
ONE_SPARED = ("--rounds", str(SPARED), "--max-rounds", str(SPARED))


@contextlib.contextmanager
def shaped_host(tmp_path: Path, link: str | None, cpu_share: float | None = None) -> Iterator[Path]:
    """Yield an ssh_config whose `testhost` is an OpenSSH server behind `link` (or on loopback), with a CPU quota."""
    with contextlib.ExitStack() as stack:
        server = OpenSSHServer()
        server.cpu_share = cpu_share
        host = "127.0.0.1"
        if link is not None:
            shaped = stack.enter_context(_verified(links.parse(link)))
            server.address = host = shaped.server_address
            server.wrappers.append(shaped.wrap)
        stack.enter_context(server)
        assert server.workdir is not None
        yield remote_config(tmp_path, server, server.workdir / "client_ed25519", known_hosts=True, host=host)


@contextlib.contextmanager
def _verified(spec: links.LinkSpec) -> Iterator[EmulatedLink]:
    """Yield a verified link, built once more when the first one's check refused it (as sshbench_on_link)."""
    try:
        shaped = contextlib.ExitStack()
        link = shaped.enter_context(linkcheck.verified(spec))
    except SshbenchError as refused:
        if LINK_REFUSED not in str(refused):
            raise
        link = shaped.enter_context(linkcheck.verified(spec))
    with shaped:
        yield link


def _doc(env: dict[str, str], *args: str) -> dict[str, Any]:
    """Run sshbench with --json; return its document (exit 0, or 9 when the budget cut a row short)."""
    done = sshbench_on_link(env, *args, "--json")
    assert done.returncode in (0, 9), done.stderr
    return dict(json.loads(done.stdout))


def _tune_down(env: dict[str, str], config: Path, *args: str) -> dict[str, Any]:
    """Return the document of `tune testhost --direction down` with the given ssh_config and arguments."""
    return _doc(env, "tune", "testhost", "--ssh-config", str(config), "--direction", "down", *args)


def _counts(doc: dict[str, Any]) -> list[tuple[str, list[tuple[int, bool, bool]], str | None]]:
    """Return each stored transfer row's remedy, its samples (round, warm-up, ok) and failure (for an assertion)."""
    return [
        (str(st["scenario"].get("remedy")), [(s["round"], s["warmup"], s["ok"]) for s in st["samples"]], st["failure"])
        for st in doc["samples"]
        if st["scenario"].get("kind") == "throughput"
    ]


def _bound(doc: dict[str, Any], group: str) -> dict[str, Any]:
    """Return the first row's bound of a result group."""
    return dict(doc["results"][group][0]["bound"])


@LINKS
@PAIRED
def test_a_100mbit_20ms_path_to_a_remote_host_is_network_bound(cli_env: dict[str, str], tmp_path: Path) -> None:
    with shaped_host(tmp_path, "100mbit,20ms") as config:
        doc = _doc(cli_env, *REMOTE_GCM, str(config), *THREE)
    for group, side in (("download", "receiver"), ("upload", "sender")):
        row = doc["results"][group][0]
        bound = row["bound"]
        assert bound["kind"] == "network", (group, bound)
        assert bound["evidence"]["side"].startswith(side)  # a download's sender socket is recorded, not judged
        assert 0.8 * 12.5 <= row["summary"]["median"] <= 12.5 * 1.05
        rtt = row["tcp"]["client"]["min_rtt_ms"]
        assert 16 <= rtt <= 24, rtt  # the path's RTT within 20 %, seen by the kernel
    assert abs(_bound(doc, "upload")["limit"] - 12.5) <= 2.5  # the sender's delivery rate: the path
    server = doc["results"]["download"][0]["tcp"]["server"]
    assert server["read_by"] == "ss over the login" and 16 <= server["min_rtt_ms"] <= 24


@LINKS
@PAIRED
def test_a_long_fat_path_to_a_remote_host_is_ssh_window_bound(cli_env: dict[str, str], tmp_path: Path) -> None:
    with shaped_host(tmp_path, "1gbit,30ms") as config:  # 2 MiB / 30 ms = 70 MB/s, well below the link's 125
        doc = _doc(cli_env, *REMOTE_GCM, str(config), *THREE, "--direction", "down")
    row = doc["results"]["download"][0]
    # ssh-window; `unknown` (never `network`) when a loss on the path held it below 80 % of the window/RTT
    assert row["bound"]["kind"] in ("ssh-window", "unknown"), row["bound"]
    assert row["summary"]["median"] <= WINDOW / 0.030 / 1e6 * 1.05  # never above the window per round trip
    server = row["tcp"]["server"]
    assert server["read_by"] == "ss over the login" and 24 <= server["min_rtt_ms"] <= 36


@LINKS  # alone: its 1 MiB copies are mostly a login and zlib's time, which a second test's CPU changes (paired, the
# gain's interval once reached down to +0.1 %)
def test_on_a_20mbit_path_compression_wins_with_text(cli_env: dict[str, str], tmp_path: Path) -> None:
    """Random data is never given compression: test_tune_choice.py checks the choice without a link."""
    with shaped_host(tmp_path, "20mbit,10ms") as config:
        text = _tune_down(cli_env, config, *ONE_SPARED, "--payload", "text", "--size", "1M", "--max-time", "2m")
    down = {f["group"]: f for f in text["tune"]["findings"]}["download"]
    assert down["bound"]["kind"] == "network", down["bound"]
    squeezed = next(r for r in down["remedies"] if r["scenario"].get("remedy") == "compression")
    # the corpus gzips 2.18x; at 20 Mbit/s zlib's own time and each copy's login show (1.43x here, 1.28x [1.21,
    # 1.35] on a slower CI machine; 10 Mbit/s gave 1.5x or more and took 64 s of the suite's 15 minutes, 20 Mbit/s 45 s;
    # ONE_SPARED rounds: on 2026-12-04 six gave five pairs at 1.31-1.80 and one at 0.955, inconclusive)
    assert squeezed["helps"] and squeezed["verdict"]["ratio"] >= 1.2, squeezed
    assert "Compression yes" in text["tune"]["paste"]["ssh_config"]


@LINKS
@PAIRED
def test_an_embedded_dropbear_behind_a_long_fat_link_is_measured_with_more_connections_and_a_wider_window(
    cli_env: dict[str, str],
) -> None:
    doc = _doc(
        cli_env,
        "tune",
        "local:dropbear",
        "--link",
        "1gbit,20ms",  # 2 MiB / 20 ms = 105 MB/s, below the link's 125
        "--direction",
        "up",
        *SIX,
        "--size",
        "2M",  # Dropbear uploads 5-13 MB/s here: 8M over 30 ms took 60-72 s of the suite's 15 minutes
        "--max-time",
        "120s",
    )
    up = {f["group"]: f for f in doc["tune"]["findings"]}["upload"]
    # Dropbear's -W 2 MiB over 20 ms: at the window per RTT, or below it and unexplained (Dropbear adjusts its window
    # late: 14 MB/s here, 67 % of 2 MiB / RTT; the kernel's `network` is refused on a link that carries 125 MB/s)
    # or `tcp-window`: the client waited on Dropbear's TCP window (median 128 KiB) half its busy time in one run
    assert up["bound"]["kind"] in ("ssh-window", "tcp-window", "unknown"), up["bound"]
    wider = next(r for r in up["remedies"] if r["scenario"].get("remedy") == "window=8388608")
    assert wider["verdict"] is not None and wider["command"].startswith("start dropbear with -W 8388608")
    assert not any("advice" in a and "window" in a for a in up["advice"])  # measured, so not named as advice
    assert (wider["command"] in doc["tune"]["paste"]["commands"]) is (wider["helps"] and up["remedies"][0] == wider)
    # more connections at once, as a window bound calls for (Dropbear refuses more than 5 logins at once)
    measured = {r["scenario"].get("remedy"): r for r in up["remedies"]}
    assert {"streams=2", "streams=4"} <= set(measured) and "streams=8" not in measured
    assert all(r["verdict"] is not None for r in measured.values()), _counts(doc)  # each read against the default
    # Only what helped is pasted. How much more connections gain is not asserted (a performance target lives in
    # docs/BENCHMARKS.md: 4 connections 2.4-2.5x on 213-231 MB copies to a host behind 1 Gbit/s, 100 ms).
    helped = [r for r in up["remedies"] if r["helps"] and r["verdict"]["ratio"] > 1.05]
    assert bool(doc["tune"]["paste"]["commands"]) == bool(helped)


@PAIRED  # its server's quota (15 % of a CPU) bounds it and the kernel's throttling counts its own cgroup only
def test_a_remote_server_at_a_small_cpu_quota_is_server_cpu_bound(cli_env: dict[str, str], tmp_path: Path) -> None:
    with shaped_host(tmp_path, None, cpu_share=0.15) as config:
        doc = _doc(
            cli_env,
            *REMOTE_GCM,
            str(config),
            *THREE,
            "--direction",
            "down",
            "--size",
            "64M",
        )
    # 64 MiB: a sample spans several of the quota's 100 ms periods (4 MiB samples, 0.2 s, were throttled 0-20 %)
    row = doc["results"]["download"][0]
    assert row["tcp"]["remote_session"]["quota"] == pytest.approx(0.15)
    assert row["costs"]["server_cpu_gib"] is not None  # measured over the login
    bound = row["bound"]
    assert bound["kind"] == "server-cpu" and bound["evidence"]["cpu_share"] == pytest.approx(0.15), bound
    assert bound["evidence"]["throttled_share"] >= 0.2  # its cgroup held it back: the kernel's own account


def test_tune_on_the_embedded_default_measures_the_remedies_it_chose(cli_env: dict[str, str]) -> None:
    # the six rounds end the run (56 s on a machine 1.6x slower than the one that set 60 s, which then cut the
    # latency remedies short of their verdict): --max-time is only a cap, given room
    doc = _doc(cli_env, "tune", *SIX, "--size", "64M", "--max-time", "150s")
    found = {f["group"]: f for f in doc["tune"]["findings"]}
    assert set(found) == {"download", "upload", "latency"}
    master = found["latency"]["remedies"][0]
    assert master["scenario"]["remedy"] == "master" and master["helps"]  # a reused login is quicker
    assert "ControlMaster auto" in doc["tune"]["paste"]["ssh_config"]
    for f in (found["download"], found["upload"]):
        kinds = {r["scenario"].get("remedy") for r in f["remedies"]}
        if f["bound"]["kind"] in ("client-cpu", "server-cpu", "crypto"):
            assert any(r["scenario"].get("cipher") for r in f["remedies"])
        else:
            assert {"streams=2", "streams=4", "streams=8"} <= kinds
    samples = [s for sc in doc["samples"] for s in sc["samples"] if s["ok"] and not s["warmup"]]
    assert samples and all(s["nbytes"] for s in samples if s["value"] and s["value"] > 1)
