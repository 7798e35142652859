"""The guardian of one sshbench process: `python -m sshbench.guardian LEASE OWNER [OWNER_WAIT]`.

Started by `leases.Keeper` in its own session with a pipe as stdin whose only writer is the owner. It
blocks until the pipe closes (the owner exited, however it died), waits for the owner's PID to be gone,
and reaps the lease if it is still there: an owner that cleaned up after itself has removed it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from sshbench import leases


def main(argv: list[str]) -> int:
    """Wait for the owner's end, then reap what it left; return the exit status."""
    path, owner = Path(argv[0]), leases.Owner.parse(argv[1])
    wait = float(argv[2]) if len(argv) > 2 else leases.OWNER_WAIT
    while sys.stdin.buffer.read(4096):
        pass  # the owner never writes: this returns at EOF, when the owner has exited
    deadline = time.monotonic() + wait
    while owner is not None and owner.alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    if path.exists():
        from sshbench.storage.store import settle

        leases.reap_file(path, settle)
    leases.tidy()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
