"""The text payload (ground): a fixed, reproducible corpus, the same bytes on every machine, and how far gzip
shrinks it (what `tune --payload text` compresses)."""

from __future__ import annotations

import os
import random
import zlib

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
