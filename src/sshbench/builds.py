"""Programs sshbench builds from pinned sources (the Go and Rust client drivers in clients/drivers/NAME/; servers
next), with the toolchain found here, once: the binary is kept in $XDG_CACHE_HOME/sshbench/drivers/ under a hash of
the sources and the toolchain, so an edited source or a new toolchain builds anew and an unchanged one is reused.
Go's go.mod and go.sum pin every module; the Rust driver pins its direct crates exactly in Cargo.toml (no Cargo.lock
is kept: it would name a registry). The first build fetches what is pinned through the toolchain's registry into its
own cache. A program that cannot be built does not run here, with the toolchain's own words as the reason."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sshbench import leases

BUILD_TIMEOUT = 900.0  # seconds: the downloads and a cold compile (Rust's crypto crates) on a slow machine


@dataclass(frozen=True)
class Toolchain:
    """How one language's drivers are built."""

    language: str
    command: str  # go, cargo
    dirs: tuple[str, ...]  # where its installers put the command, when it is not on PATH ($CARGO_HOME: rustup's)
    sources: tuple[str, ...]  # the files of a driver, relative to its directory
    minimum: str  # the oldest toolchain the pinned modules or crates build with
    took: str  # how long a first build takes here, for the progress line

    def argv(self, command: str, out: Path) -> list[str]:
        """Return the build command, leaving the binary at `out` (Rust: under target/ in the build directory)."""
        if self.command == "go":
            return [command, "build", "-mod=readonly", "-trimpath", "-o", str(out), "."]
        return [command, "build", "--release", "--quiet"]


TOOLCHAINS = {
    "Go": Toolchain(
        "Go",
        "go",
        ("/usr/local/go/bin", "/usr/lib/go/bin"),
        ("main.go", "go.mod", "go.sum"),
        "Go 1.26",
        "about 20 s",
    ),
    "Rust": Toolchain("Rust", "cargo", ("$CARGO_HOME/bin",), ("Cargo.toml", "src/main.rs"), "Rust 1.85", "about 2 min"),
}


@dataclass(frozen=True)
class Built:
    """A driver's binary, or why there is none."""

    path: str | None
    why: str | None = None


def toolchain_command(language: str) -> str | None:
    """Return a language's build command (`go`, `cargo`): on PATH, else where its installers put it."""
    t = TOOLCHAINS[language]
    cargo_home = os.environ.get("CARGO_HOME") or str(Path.home() / ".cargo")
    dirs = [Path(d.replace("$CARGO_HOME", cargo_home)) for d in t.dirs]
    found = (str(d / t.command) for d in dirs if os.access(d / t.command, os.X_OK))
    return shutil.which(t.command) or next(found, None)


def cache_dir() -> Path:
    """Return $XDG_CACHE_HOME/sshbench/drivers (default ~/.cache/sshbench/drivers)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sshbench" / "drivers"


def source_files(t: Toolchain, src: Path) -> tuple[str, ...]:
    """Return a program's source files: the toolchain's, and for Go every other .go file of its directory."""
    more = {p.name for p in src.glob("*.go")} if t.command == "go" else set()
    return tuple(sorted({*t.sources, *more}))


def _digest(src: Path, files: tuple[str, ...], command: str) -> str:
    """Return a hash of the driver's sources and the toolchain's path and time (a new toolchain builds anew)."""
    h = hashlib.sha256(f"{command} {os.stat(command).st_mtime_ns}".encode())
    for name in files:
        h.update(name.encode() + b"\0" + (src / name).read_bytes())
    return h.hexdigest()[:16]


def _compile(t: Toolchain, command: str, src: Path, out: Path) -> str | None:
    """Build the driver from a copy of its sources and install it at `out`; return the toolchain's complaint."""
    with leases.private_dir("sshbench-build-") as work:
        for name in source_files(t, src):
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / name, work / name)
        made = work / "driver" if t.command == "go" else work / "target" / "release" / out.name
        env = os.environ | {"CGO_ENABLED": "0", "CARGO_TARGET_DIR": str(work / "target")}
        try:
            done = subprocess.run(
                t.argv(command, made),
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"`{t.command} build` did not finish in {BUILD_TIMEOUT:.0f} s"
        if done.returncode != 0 or not made.is_file():
            words = " ".join(done.stderr.split())[-400:] or f"status {done.returncode}"
            return f"`{t.command} build` failed: {words}"
        partial = out.with_name(f".{out.name}.{os.getpid()}")
        shutil.copy2(made, partial)
        os.replace(partial, out)
    return None


def build(
    name: str, language: str, src: Path, note: Callable[[str], None] | None = None, what: str = "driver"
) -> Built:
    """Return the binary built from `src` (a client `driver`, or a `server`), building it when this source and
    toolchain have none yet."""
    t = TOOLCHAINS[language]
    command = toolchain_command(language)
    if command is None:
        return Built(
            None,
            f"no {language} toolchain (`{t.command}` on PATH or in {' or '.join(t.dirs)}): install "
            f"{t.minimum} or later; sshbench builds this driver from its sources",
        )
    out = cache_dir() / f"{name}-{_digest(src, source_files(t, src), command)}" / f"sshbench-{name}"
    if os.access(out, os.X_OK):
        return Built(str(out))
    if note is not None:
        note(f"building the {name} {what} with {command} (once, {t.took}; kept in {out.parent})")
    out.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    why = _compile(t, command, src, out)
    if why:
        return Built(None, f"its {what} could not be built: {why}")
    for old in out.parent.parent.glob(f"{name}-*"):  # earlier sources' or toolchains' builds
        if old != out.parent:
            shutil.rmtree(old, ignore_errors=True)
    return Built(str(out))
