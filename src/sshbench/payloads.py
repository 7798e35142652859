"""Payloads (ground): where a transfer's bytes come from (`Payload`: zeros, random or text, with its remote
command), the text corpus, a fixed reproducible one, the same bytes on every machine, and how far gzip shrinks it
(what `tune --payload text` compresses)."""

from __future__ import annotations

import os
import random
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

_REMOTE_PATH = re.compile(r"^/[A-Za-z0-9_./-]{1,200}$")
TEXT_WORDS = 4096  # the text corpus: words of 2-9 letters drawn from a fixed seed, in lines of 12 words


def text_block(size: int = 1 << 20) -> bytes:
    """Return `size` bytes of the fixed, reproducible text corpus (the same bytes on every machine)."""
    rng = random.Random(20261124)
    words = [
        "".join(rng.choice("etaoinshrdlucmfwypvbgkqjxz") for _ in range(rng.randint(2, 9))) for _ in range(TEXT_WORDS)
    ]
    out = bytearray()
    while len(out) < size:
        out += (" ".join(rng.choice(words) for _ in range(12)) + "\n").encode()
    return bytes(out[:size])


def text_ratio() -> float:
    """Return how far gzip (level 6) shrinks the text corpus: original / compressed."""
    block = text_block()
    return len(block) / len(zlib.compress(block, 6))


def fill(fd: int, size: int, block: bytes | None = None) -> None:
    """Write `size` bytes to a file: `block` repeated, or one 16 MiB random block repeated (before measuring)."""
    block = block or os.urandom(min(size, 16 << 20))
    written = 0
    while written < size:
        written += os.write(fd, block[: size - written])


@dataclass(frozen=True)
class Payload:
    """Where transfer bytes come from: zeros, or a random or text file (with its copy on the server)."""

    kind: str  # "zero", "random" or "text"
    local_dir: Path
    remote_file: str | None = None  # random payload staged on the server

    def download_command(self, size: int) -> str:
        """Return the fixed remote command that writes `size` payload bytes to stdout."""
        if self.kind == "zero" or self.remote_file is None:
            return f"head -c {int(size)} /dev/zero"
        if not _REMOTE_PATH.match(self.remote_file):
            raise ValueError(f"unsafe remote path {self.remote_file!r}")
        return f"while cat {self.remote_file}; do :; done | head -c {int(size)}"

    def upload_source(self, size: int) -> Path:
        """Return a local file of exactly `size` bytes (sparse zeros, or random data)."""
        path = self.local_dir / f"payload-{self.kind}-{size}"
        if not path.exists() or path.stat().st_size != size:
            with open(path, "wb") as f:
                if self.kind == "zero":
                    f.truncate(size)
                else:
                    fill(f.fileno(), size, text_block(min(size, 16 << 20)) if self.kind == "text" else None)
            _read_through(path)
        return path


def _read_through(path: Path) -> None:
    """Read a new payload file once, before timing, so the first sample does not pay to fill the page cache."""
    with open(path, "rb", buffering=0) as f:
        while f.read(1 << 20):
            pass
