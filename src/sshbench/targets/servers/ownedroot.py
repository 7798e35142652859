"""A root directory the user owns, for a server that checks who owns every directory above authorized_keys (TinySSH).

`python -m sshbench.targets.servers.ownedroot PRIVATE_HOME USER_HOME ROOT ARGV...`, run as root of a user and
mount namespace of a normal user's own (namespace.private_home). In a user namespace the machine's root-owned
directories appear owned by nobody, and tinysshd refuses an authorized_keys below them. So this builds a new
root on a tmpfs at ROOT (made by us, so owned by the user once mapped back): along USER_HOME's path every
directory is a new one of ours, with every other entry beside it bind-mounted from the machine (the system's
files stay as they are and where they are); USER_HOME itself is PRIVATE_HOME. It then makes that the mount
namespace's root (pivot_root, not chroot: a chrooted process may not create the nested user namespace that
maps back to the user's own uid) and executes ARGV there. The mounts exist only in that namespace.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

OLD = ".sshbench-old-root"


def mount(*args: str) -> None:
    """Run mount(8) with these arguments, or exit naming what failed."""
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"ownedroot: mount {' '.join(args)}: {done.stderr.strip()}")


def mirror(source: Path, target: Path, keep: str | None) -> None:
    """Bind every entry of `source` into the new directory `target`, except `keep` (the path's next part)."""
    for entry in sorted(os.listdir(source)):
        if entry == keep:
            continue
        real, new = source / entry, target / entry
        if real.is_symlink():
            os.symlink(os.readlink(real), new)
        elif real.is_dir():
            new.mkdir()
            mount("--rbind", str(real), str(new))
        elif real.exists():
            new.touch()
            mount("--bind", str(real), str(new))


def build(private_home: Path, user_home: Path, root: Path) -> None:
    """Make the owned root at `root`: the machine's entries beside each part of the user's home path."""
    mount("-t", "tmpfs", "-o", "mode=0755", "sshbench-root", str(root))
    parts = user_home.parts[1:]
    source, target = Path("/"), root
    for i, part in enumerate(parts):
        mirror(source, target, part)
        source, target = source / part, target / part
        target.mkdir(mode=0o755)
        if i == len(parts) - 1:
            mount("--bind", str(private_home), str(target))
    (root / OLD).mkdir()


def main(argv: list[str]) -> None:
    """Build the root, make it the namespace's, and execute the server there."""
    private_home, user_home, root, command = Path(argv[0]), Path(argv[1]), Path(argv[2]), argv[3:]
    build(private_home, user_home, root)
    os.chdir(root)
    done = subprocess.run(["pivot_root", ".", OLD], capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"ownedroot: pivot_root: {done.stderr.strip()}")
    os.chdir("/")
    subprocess.run(["umount", "-l", f"/{OLD}"], capture_output=True)  # what stays is only the machine's own
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
