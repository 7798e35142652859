"""Fuzzing every parser of outside text: ssh -Q, ssh -G, ssh -v lines, a KEXINIT through the ssh-audit adapter,
policy TOML, stored JSON. Each either returns or raises sshbench's own error, never anything else."""

from __future__ import annotations

import json
import sqlite3
import struct
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fakes import runs_db
from sshbench.analyse import policy
from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh import audit
from sshbench.ssh.text import (
    first_time,
    parse_config_dump,
    parse_exit_status,
    parse_negotiated,
    parse_query,
    parse_transferred,
    phase_breakdown,
    ssh_failure,
)
from sshbench.storage.store import Store

# Real prefixes of the lines the parsers look for, so that fuzzing reaches past the first comparison.
SSH_V = [
    "debug1: kex: algorithm: ",
    "debug1: kex: host key algorithm: ",
    "debug1: kex: server->client cipher: ",
    "debug1: kex: client->server cipher: ",
    "debug1: Remote protocol version 2.0, remote software version ",
    "debug1: Authenticated to ",
    "debug1: Sending command: ",
    "debug1: Exit status ",
    "Transferred: sent ",
    "debug1: Connecting to ",
    "debug1: Connection established.",
    "debug1: SSH2_MSG_KEXINIT sent",
    "debug1: SSH2_MSG_NEWKEYS received",
    "debug1: Authentication succeeded",
    "",
]
LINE = st.builds(lambda prefix, rest: prefix + rest, st.sampled_from(SSH_V), st.text(max_size=60))
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)


@given(st.lists(LINE, max_size=30), st.floats(min_value=0, max_value=1e6, allow_nan=False))
def test_ssh_verbose_parsers_accept_any_lines(lines: list[str], end: float) -> None:
    stamped = [(float(i), line) for i, line in enumerate(lines)]
    parse_negotiated(lines)
    parse_transferred(lines)
    parse_exit_status(lines)
    first_time(stamped, "Sending command")
    phases = phase_breakdown(stamped, 0.0, end + len(lines))
    assert all(seconds >= 0 for _, seconds in phases)
    assert ssh_failure(lines, False, 30.0)
    assert "30 s" in ssh_failure(lines, True, 30.0)


@given(st.text(max_size=400))
def test_query_and_config_dump_parsers_accept_any_text(text: str) -> None:
    assert all(name and " " not in name for name in parse_query(text))
    dump = parse_config_dump(text)
    assert all(key == key.lower() for key in dump)


def _kexinit(lists: list[bytes], declared: list[int | None]) -> bytes:
    """Return a KEXINIT payload (after the message type) with these name-lists and declared lengths."""
    body = b"\x11" * 16
    for names, length in zip(lists, declared, strict=True):
        body += struct.pack(">I", len(names) if length is None else length % 2**32) + names
    return body + b"\0" + b"\0\0\0\0"


@given(
    st.lists(st.binary(max_size=40), min_size=10, max_size=10),
    st.lists(st.none() | st.integers(min_value=0, max_value=2**32 - 1), min_size=10, max_size=10),
    st.integers(min_value=0, max_value=200),
)
def test_a_kexinit_of_any_shape_is_read_or_refused_with_our_error(
    lists: list[bytes], declared: list[int | None], cut: int
) -> None:
    payload = _kexinit(lists, declared)
    for candidate in (payload, payload[:cut]):
        try:
            offered = audit.offer("SSH-2.0-fuzz", candidate)
        except SshbenchError as exc:
            assert "KEXINIT is malformed" in exc.cause
        else:
            assert all(isinstance(name, str) for name in offered.kex + offered.ciphers)


@given(st.binary(max_size=300))
def test_kexinit_bytes_at_random(payload: bytes) -> None:
    try:
        offered = audit.offer("SSH-2.0-fuzz", payload)
    except SshbenchError as exc:
        assert exc.code == ExitCode.CONNECTION_FAILED
    else:
        assert offered.banner == "SSH-2.0-fuzz"


TOML_LINE = st.one_of(
    st.just("[allow]"),
    st.just("[deny]"),
    st.builds(lambda v: f"base = {json.dumps(v)}", JSON),
    st.builds(
        lambda k, v: f"{k} = {json.dumps(v)}",
        st.sampled_from(["kex", "cipher", "mac", "hostkey", "bogus"]),
        st.lists(st.sampled_from(["aes128-ctr", "chacha20-poly1305@openssh.com", "nope", "", "3des-cbc"]), max_size=3)
        | JSON,
    ),
    st.text(max_size=30),
)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TOML_LINE, max_size=8))
def test_policy_files_load_or_fail_with_our_error(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "policy.toml"
        path.write_text("\n".join(lines))
        try:
            loaded = policy.load(path)
        except SshbenchError as exc:
            assert exc.cause.startswith("invalid policy file")
        else:
            assert loaded.level in policy.LEVELS


COLUMNS = [("runs", "options"), ("runs", "environment"), ("runs", "discovery"), ("scenarios", "params")]


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(COLUMNS), JSON | st.text(max_size=40))
def test_damaged_stored_json_is_reported_not_crashed_on(column: tuple[str, str], value: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = runs_db(Path(tmp) / "runs.db")
        table, name = column
        text = value if isinstance(value, str) else json.dumps(value)
        with sqlite3.connect(db) as con:
            con.execute(f"UPDATE {table} SET {name}=?", (text,))
        store = Store(db, read_only=True)
        try:
            store.load(1)
            store.runs()
        except SshbenchError as exc:
            assert "damaged in the results database" in exc.cause
        finally:
            store.close()
