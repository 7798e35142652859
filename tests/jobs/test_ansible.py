"""Host-to-host on Ansible: contrib/ansible/sshbench-peers.yml runs sshbench on an inventory host (here this
machine, `ansible_connection=local`) against an embedded target, fetches its JSON back, and `sshbench import`
adds it to another database, sample for sample, with the measuring host recorded as the client; in load mode two
hosts start their steps at one agreed instant and `import --merge` pools their logins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import sshbench
from sshbench.analyse.load import histogram

pytestmark = pytest.mark.integration
ROOT = Path(__file__).parent.parent.parent
PLAYBOOK = ROOT / "contrib" / "ansible" / "sshbench-peers.yml"


def _play(cli_env: dict[str, str], tmp_path: Path, inventory: Path, extra: dict[str, object]) -> None:
    """Run the playbook on the inventory with these variables, the hosts' sshbench data apart from the test's and
    ansible's files in the test's directory; it must succeed."""
    bin_dir = Path(sys.executable).parent
    env = {
        **cli_env,
        "LC_ALL": "C.UTF-8",
        "ANSIBLE_NOCOLOR": "1",
        "XDG_DATA_HOME": str(tmp_path / "host-data"),
        "PATH": f"{bin_dir}{os.pathsep}{cli_env['PATH']}",
        # ansible's temporary files stay in the test's directory (its "remote" side expands ~ from the passwd home)
        "ANSIBLE_HOME": str(tmp_path / "ansible"),
        "ANSIBLE_LOCAL_TMP": str(tmp_path / "ansible" / "tmp"),
        "ANSIBLE_REMOTE_TMP": str(tmp_path / "ansible" / "remote"),
    }
    done = subprocess.run(
        [str(bin_dir / "ansible-playbook"), "-i", str(inventory), str(PLAYBOOK), "-e", json.dumps(extra)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_playbook_runs_sshbench_on_the_host_and_import_round_trips_its_json(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    bin_dir = Path(sys.executable).parent
    inventory = tmp_path / "inventory.ini"
    inventory.write_text(f"[measurers]\nbox1 ansible_connection=local ansible_python_interpreter={sys.executable}\n")
    results = tmp_path / "results"
    extra = {
        "sshbench_bin": str(bin_dir / "sshbench"),
        "sshbench_peers": ["local"],
        "sshbench_args": [
            "--cipher",
            "aes128-gcm@openssh.com",
            "--direction",
            "down",
            "--rounds",
            "3",
            "--max-time",
            "1m",
        ],
        "sshbench_results": str(results),
        # the host's own results folder in this test's directory: both tests play "box1" on this machine, at once
        "sshbench_remote_dir": str(tmp_path / "on-{{ inventory_hostname }}"),
    }
    _play(cli_env, tmp_path, inventory, extra)
    fetched = results / "box1-to-local.json"
    assert fetched.exists(), sorted(p.name for p in results.rglob("*"))
    original = json.loads(fetched.read_text())
    assert original["run"]["command"] == "throughput"

    imported = sshbench(cli_env, "import", str(fetched), "--client", "box1", "--json")
    assert imported.returncode == 0, imported.stderr
    run_id = json.loads(imported.stdout)["imported"][0]["run"]
    again = json.loads(sshbench(cli_env, "export", str(run_id), "--format", "json").stdout)
    for key in ("samples", "results", "discovery"):
        assert again[key] == original[key], key
    assert again["run"]["environment"]["client_host"] == "box1"
    assert again["run"]["started_at"] == original["run"]["started_at"]
    shown = sshbench(cli_env, "show", str(run_id))
    assert "measured from box1" in shown.stdout


def test_import_refuses_what_is_not_a_run_document(cli_env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": 1}')
    done = sshbench(cli_env, "import", str(bad))
    assert done.returncode == 2
    assert "cannot import notes.json" in done.stderr and "--json" in done.stderr
    assert "No runs stored yet" in sshbench(cli_env, "history").stdout  # nothing half-imported


def test_the_playbooks_load_mode_starts_two_hosts_together_and_merges_their_logins(
    cli_env: dict[str, str], tmp_path: Path, testhost: Path
) -> None:
    """Two inventory hosts (this machine twice) load one target of the user's from one agreed instant; `import
    --merge` makes one run whose step holds both hosts' logins, its p99 that of the pooled logins."""
    bin_dir = Path(sys.executable).parent
    inventory = tmp_path / "inventory.ini"
    local = f"ansible_connection=local ansible_python_interpreter={sys.executable}"
    inventory.write_text(f"[generators]\nbox1 {local}\nbox2 {local}\n")
    results = tmp_path / "results"
    load = ["--rate", "4", "--step-time", "2s", "--max-rate", "4", "--ssh-config", str(testhost)]
    extra = {
        "sshbench_bin": str(bin_dir / "sshbench"),
        "sshbench_command": "load",
        "sshbench_load_target": "testhost",
        "sshbench_load_args": load,
        "sshbench_start_delay": 4,
        "sshbench_results": str(results),
        # the host's own results folder in this test's directory: both tests play "box1" on this machine, at once
        "sshbench_remote_dir": str(tmp_path / "on-{{ inventory_hostname }}"),
    }
    _play(cli_env, tmp_path, inventory, extra)
    files = [results / f"box{i}-to-testhost.json" for i in (1, 2)]
    docs = [json.loads(f.read_text()) for f in files]
    starts = {d["run"]["options"]["start_at"] for d in docs}
    assert len(starts) == 1 and None not in starts  # one agreed instant
    merged = sshbench(cli_env, "import", "--merge", *map(str, files), "--json")
    assert merged.returncode == 0, merged.stderr
    run_id = json.loads(merged.stdout)["merged"]["run"]
    (step,) = json.loads(sshbench(cli_env, "show", str(run_id), "--json").stdout)["load"]["steps"]
    hosts = [d["load"]["steps"][0]["logins"] for d in docs]
    assert step["logins"] == sum(hosts) == 16 and step["offered_rate"] == 8, (step, hosts)
    pooled = [s["value"] for d in docs for e in d["samples"] for s in e["samples"] if s["ok"]]
    assert step["percentiles"]["p99"] == histogram(pooled).get_value_at_percentile(99) / 1e6, step
    shown = sshbench(cli_env, "show", str(run_id))
    host = docs[0]["run"]["environment"]["client_host"]  # the same machine twice: told apart by their files
    assert f"measured from {host} (box1-to-testhost), {host} (box2-to-testhost)" in shown.stdout, shown.stdout
