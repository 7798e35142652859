"""Recommended configuration snippets are valid for `ssh -G` and `sshd -T`."""

from __future__ import annotations

import subprocess
from pathlib import Path

from fakes import DISCOVERY, factorised_sweep
from sshbench.analyse import policy
from sshbench.analyse.recommend import recommend
from sshbench.render.snippets import ssh_config, sshd_config
from sshbench.ssh.proc import require_binary


def test_snippets_are_valid_ssh_and_sshd_config(tmp_path: Path) -> None:
    rec = recommend(factorised_sweep(), DISCOVERY, policy.builtin("modern"), full=False)
    ssh, sshd, keygen = (require_binary(b, "openssh-client") for b in ("ssh", "sshd", "ssh-keygen"))
    subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "hk")], check=True)
    for choice in (rec.overall, rec.within_policy, rec.handshake):
        assert choice is not None
        client = tmp_path / "ssh_config"
        client.write_text(ssh_config(choice, "backup-host", "test"))
        dump = subprocess.run([ssh, "-G", "-F", str(client), "backup-host"], capture_output=True, text=True)
        assert dump.returncode == 0, dump.stderr
        effective = dict(line.split(" ", 1) for line in dump.stdout.splitlines() if " " in line)
        for key, values in choice.lists.items():
            assert effective[key.lower()] == ",".join(values)
        server = tmp_path / "sshd_config"
        server.write_text(sshd_config(choice, "test") + f"HostKey {tmp_path / 'hk'}\n")
        test = subprocess.run([sshd, "-T", "-f", str(server)], capture_output=True, text=True)
        assert test.returncode == 0, test.stderr
        for key, values in choice.lists.items():
            assert f"{key.lower()} {','.join(values)}" in test.stdout
