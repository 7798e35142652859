"""The Go driver: built once per source and toolchain, reused after, and a reason (not an error) where it cannot be
built; its version line names the modules go.mod pins."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from sshbench import builds as build
from sshbench.clients.launch import detect, sources
from sshbench.clienttypes import client_type
from sshbench.model import Direction, Kind, Scenario
from sshbench.render.clients import code_lines


def test_no_go_toolchain_is_a_reason_to_skip_with_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "toolchain_command", lambda language: None)
    found = detect(client_type("gossh"))
    assert found.missing is not None and "no Go toolchain" in found.missing and "install Go 1.26" in found.missing
    found = detect(client_type("russh"))
    assert found.missing is not None and "no Rust toolchain (`cargo` on PATH or in $CARGO_HOME/bin)" in found.missing


def test_the_tuned_code_lines_are_the_settings_the_drivers_use() -> None:
    source = (sources("gossh") / "main.go").read_text()
    code = client_type("gossh").code
    assert code is not None and code.sftp_tuned == ", sftp.UseConcurrentWrites(true)"
    assert "sftp.UseConcurrentWrites(true)" in source
    rust = (sources("russh") / "src" / "main.rs").read_text()
    for constant in (
        "TUNED_WINDOW: u32 = 64 << 20;",
        "TUNED_PACKET: u32 = 65535;",
        "TUNED_WRITES: usize = 64;",
        "TUNED_BUFFER: usize = 256 << 10;",
    ):
        assert constant in rust, constant
    tuned = Scenario(Kind.TOOL, tool="sftp", client="russh", mode="tuned", direction=Direction.UP)
    lines = code_lines(tuned, "tool upload")
    assert "nodelay: true, window_size: 64 << 20, maximum_packet_size: 65535, ..Default::default()" in lines[0]
    assert "c.nodelay = true;" in rust
    assert "max_concurrent_writes: 64" in lines[1] and "BufReader::with_capacity(256 << 10, local)" in lines[1]
    assert "{" in code_lines(Scenario(Kind.THROUGHPUT, client="russh", direction=Direction.DOWN), "download")[1]


def test_the_rust_driver_names_the_russh_sftp_it_pins() -> None:
    manifest = (sources("russh") / "Cargo.toml").read_text()
    version = re.search(r'russh-sftp = "=([0-9.]+)"', manifest)
    assert version is not None
    assert f'const SFTP_VERSION: &str = "{version[1]}";' in (sources("russh") / "src" / "main.rs").read_text()


@pytest.mark.integration
@pytest.mark.skipif(build.toolchain_command("Go") is None, reason="no Go toolchain here")
def test_the_driver_is_built_once_and_reused(
    monkeypatch: pytest.MonkeyPatch, shared_cache: Path, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # a cache of its own; Go's module and build caches shared
    monkeypatch.setenv("GOFLAGS", "-modcacherw")
    monkeypatch.setenv("GOMODCACHE", str(shared_cache / "gomod"))
    monkeypatch.setenv("GOCACHE", str(shared_cache / "go-build"))
    stale = tmp_path / "sshbench" / "drivers" / "gossh-0000000000000000"
    stale.mkdir(parents=True)
    first = build.build("gossh", "Go", sources("gossh"))
    assert first.path is not None, first.why
    assert not stale.exists()  # a build removes the ones of earlier sources
    notes: list[str] = []
    assert build.build("gossh", "Go", sources("gossh"), notes.append) == first and notes == []  # reused, nothing built
    said = subprocess.run([first.path, "version"], capture_output=True, text=True, timeout=30, check=False).stderr
    assert "golang.org/x/crypto v0.59.0" in said and "chacha20-poly1305@openssh.com" in said
    assert Path(first.path).parent.stat().st_mode & 0o077 == 0


def test_a_failed_build_says_gos_words(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_go = tmp_path / "go"
    fake_go.write_text("#!/bin/sh\necho 'go: cannot find module providing package (fake)' >&2\nexit 1\n")
    fake_go.chmod(0o755)
    monkeypatch.setattr(build, "toolchain_command", lambda language: str(fake_go))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    notes: list[str] = []
    built = build.build("gossh", "Go", sources("gossh"), notes.append)
    assert built.path is None and built.why is not None
    assert "`go build` failed: go: cannot find module providing package (fake)" in built.why
    assert notes and notes[0].startswith(f"building the gossh driver with {fake_go} (once, about 20 s; kept in ")
