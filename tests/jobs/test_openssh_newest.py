"""OpenSSH's newest release that Debian's archive serves, built from its source by `scripts/openssh-build` (which
`scripts/test` runs): a rekey soak against it, the master connection's own account (`ssh -O conninfo`, 10.3+), and
a post-quantum host key it lacks refused naming the release that adds it."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import CURVE, MLKEM, NEWEST_SSH, NEWEST_SSHD, OPENSSH_NEWEST, sshbench
from sshbench.discovery import Negotiated
from sshbench.errors import ExitCode
from sshbench.measure.remedies import MasterConnection, conninfo_check
from sshbench.targets.servers import registry

pytestmark = pytest.mark.integration
built = pytest.mark.skipif(
    not NEWEST_SSHD.exists() and "SSHBENCH_OPENSSH_NEWEST" not in os.environ,  # scripts/test sets it: a miss fails
    reason=f"no OpenSSH built in {OPENSSH_NEWEST}: run scripts/openssh-build (scripts/test does)",
)
PQ_HOSTKEY = "ssh-mldsa44-ed25519@openssh.com"


@built
def test_a_rekey_soak_rekeys_every_login_several_times_and_a_server_without_the_option_is_not_applicable(
    cli_env: dict[str, str],
) -> None:
    servers = f"local:sshd={NEWEST_SSHD},local:dropbear"
    args = ["interop", "--rekey", "16K", "--client", "openssh,asyncssh", "--server", servers, "--ssh", str(NEWEST_SSH)]
    done = sshbench(cli_env, *args, "--kex", CURVE, "--logins", "4", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    rekey = doc["interop"]["rekey"]
    assert rekey["limit"] == 16384 and rekey["payload"] == 4 * 16384
    (words,) = rekey["checked"].values()
    m = re.search(r"moved ([\d,]+) bytes and rekeyed (\d+) times", words)
    assert m and int(m.group(1).replace(",", "")) == 4 * 16384, words
    assert int(m.group(2)) >= 2, words  # several per login (3 here at 16K: a rekey each side asks may coincide)
    pairs = doc["interop"]["pairs"]
    assert {p["client"] for p in pairs} == {"openssh", "asyncssh"}
    assert all(p["logins"] == 4 and p["failures"] == 0 for p in pairs), pairs
    na = [st for st in doc["results"]["latency"] if st["scenario"]["server"] == "dropbear"]
    assert na and all("has no RekeyLimit" in (st.get("failure") or "") for st in na), na
    shown = sshbench(cli_env, "show", "last")
    assert "rekey soak: RekeyLimit 16,384 bytes" in shown.stdout and "rekeyed" in shown.stdout, shown.stdout


@built
def test_the_master_connection_gives_its_own_account_and_it_is_checked(tmp_path: Path) -> None:
    with registry.make_server(f"local:sshd={NEWEST_SSHD}") as target:
        reuse = MasterConnection(str(NEWEST_SSH), target, tmp_path)
        try:
            assert reuse.start() is None
            info = reuse.conninfo()
        finally:
            reuse.stop()
    assert info["kexalgorithm"] == MLKEM and info["hostkeyalgorithm"] == "ssh-ed25519", info
    assert info["cipher"] == "chacha20-poly1305@openssh.com" and info["mac"] == "", info  # AEAD: no MAC of its own
    assert re.match(r"\d+ pkts \d+ blks \S+ in, \d+ pkts \d+ blks \S+ out", info["traffic"]), info
    agreed = Negotiated(MLKEM, "ssh-ed25519", "chacha20-poly1305@openssh.com", None, None)
    assert conninfo_check(info, agreed) == "agrees"
    other = Negotiated(CURVE, "ssh-ed25519", "aes128-gcm@openssh.com", None, None)
    assert conninfo_check(info, other) == (
        f"differs: kex {MLKEM} where the default profile negotiated {CURVE}; cipher chacha20-poly1305@openssh.com "
        "where the default profile negotiated aes128-gcm@openssh.com"
    )
    assert not MasterConnection(str(NEWEST_SSH), target, tmp_path).conninfo()  # no master running: nothing


@built
def test_a_post_quantum_host_key_the_build_lacks_is_refused_naming_the_release_that_adds_it(
    cli_env: dict[str, str],
) -> None:
    keys = subprocess.run([NEWEST_SSH, "-Q", "key"], capture_output=True, text=True, check=True).stdout.split()
    if PQ_HOSTKEY in keys:
        pytest.skip(f"this build has {PQ_HOSTKEY}: its cost is measured instead (docs/BENCHMARKS.md)")
    args = ["latency", f"local:sshd={NEWEST_SSHD}", "--ssh", str(NEWEST_SSH), "--hostkey", f"ssh-ed25519,{PQ_HOSTKEY}"]
    done = sshbench(cli_env, *args)
    assert done.returncode == ExitCode.UNSUPPORTED_ALGORITHM, done.stderr
    assert "which OpenSSH 10.4 adds" in done.stderr and "post-quantum host key" in done.stderr, done.stderr
    assert "give --ssh an OpenSSH client that supports it" in done.stderr and "Traceback" not in done.stderr


def test_a_rekey_limit_out_of_range_is_refused_with_the_range(cli_env: dict[str, str]) -> None:
    done = sshbench(cli_env, "interop", "--rekey", "10", "--client", "openssh")
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert "from 1K to 64M" in done.stderr and "Traceback" not in done.stderr
