"""A user namespace of sshbench's own: an emulated link without root, where the kernel allows unprivileged ones.

`enter()` moves this process (before it starts any thread) into a new user namespace and a new network
namespace. The user's own uid and gid map to themselves, so files stay the user's and the servers run as
the user as they do without a link; the process keeps CAP_NET_ADMIN, CAP_NET_RAW and CAP_SYS_ADMIN over
what it owns (ambient, so `ip`, `tc`, `unshare`, `nsenter` and the delay line it starts have them too)
and nothing outside. The new network namespace becomes the client's end of the link: the ssh clients,
the link check and sshbench itself run in it. It has only a loopback device, so a host of the user's is
out of reach from it. Nothing in it outlives sshbench: the namespace is in the lease, and the guardian,
started before (outside: it must outlive it), kills what is left in it should sshbench die (a client whose
server vanished with the link would otherwise wait on a connection nobody answers). Not a PID namespace:
a process that made one for its children can start no thread.
"""

from __future__ import annotations

import atexit
import ctypes
import errno
import fcntl
import os
import socket
import struct
from pathlib import Path

from sshbench import hints, leases
from sshbench.errors import ExitCode, SshbenchError

CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
CAP_NET_ADMIN, CAP_NET_RAW, CAP_SYS_ADMIN = 12, 13, 21
CAPS = (CAP_NET_ADMIN, CAP_NET_RAW, CAP_SYS_ADMIN)
CAP_VERSION_3 = 0x20080522
PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE = 47, 2
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
SYSCTLS = (  # settings that forbid a normal user's namespaces, with the value that does
    ("kernel.unprivileged_userns_clone", "0", "1"),
    ("user.max_user_namespaces", "0", "15000"),
    ("kernel.apparmor_restrict_unprivileged_userns", "1", "0"),
)

_state = {"entered": False}


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def entered() -> bool:
    """Return whether this process moved into a user namespace of its own (enter)."""
    return _state["entered"]


def needed() -> bool:
    """Return whether an emulated link needs a user namespace here: not root, and no CAP_NET_ADMIN."""
    if os.geteuid() == 0 or entered():
        return False
    status = Path("/proc/self/status").read_text()
    caps = next((line.split()[1] for line in status.splitlines() if line.startswith("CapEff:")), "0")
    return not int(caps, 16) & (1 << CAP_NET_ADMIN)


def enter() -> None:
    """Move this process into a new user and network namespace with the link's capabilities, or fail saying why."""
    threads = len(os.listdir("/proc/self/task"))
    if threads > 1:
        raise RuntimeError(f"userns.enter() needs a single-threaded process, this one has {threads} threads")
    uid, gid = os.getuid(), os.getgid()
    libc = ctypes.CDLL(None, use_errno=True)
    leases.keeper().start_guardian()  # outside the namespaces: it reaps what is left of them
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
        raise refusal(os.strerror(ctypes.get_errno()))
    try:
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
        _keep_caps(libc)
        _loopback_up()
    except OSError as exc:
        raise refusal(exc.strerror or str(exc)) from exc
    _leased()
    _state["entered"] = True


def _leased() -> None:
    """Record this namespace in the lease: should sshbench die, the guardian (outside) kills what is left in it,
    such as a client whose server vanished with the link and which would wait on a connection nobody answers."""
    name = os.readlink("/proc/self/ns/net")
    leases.keeper().namespace(name)
    atexit.register(lambda: leases.keeper().forget(netns=name))  # a clean exit has stopped all of it


def _loopback_up() -> None:
    """Bring up the new namespace's loopback device (127.0.0.1 is used in it as on the host)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack_from("16sH", fcntl.ioctl(sock, SIOCGIFFLAGS, request + bytes(22)))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP) + bytes(22))


def _keep_caps(libc: ctypes.CDLL) -> None:
    """Make the link's capabilities inheritable and ambient, so the programs this process runs keep them."""
    header, data = _Header(CAP_VERSION_3, 0), (_Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget: " + os.strerror(ctypes.get_errno()))
    for cap in CAPS:
        if not data[cap // 32].permitted & (1 << cap % 32):
            raise OSError(errno.EPERM, f"the new user namespace grants no capability {cap}")
        data[cap // 32].inheritable |= 1 << cap % 32
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset: " + os.strerror(ctypes.get_errno()))
    for cap in CAPS:
        if libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "ambient capabilities: " + os.strerror(ctypes.get_errno()))


def forbidding(sysctl: Path = Path("/proc/sys")) -> str | None:
    """Return the setting that forbids a normal user's namespaces here, with how to allow it (None: none found)."""
    for name, bad, good in SYSCTLS:
        path = sysctl / name.replace(".", "/")
        try:
            value = path.read_text().strip()
        except OSError:
            continue
        if value == bad:
            return f"{name} = {bad} (allow it as root: `sysctl -w {name}={good}`)"
    return None


def refusal(why: str) -> SshbenchError:
    """Return the error for a kernel that gives a normal user no namespace of its own."""
    setting = forbidding()
    cause = f"the kernel forbids it: {setting}" if setting else f"the kernel refused: {why}"
    return SshbenchError(
        "an emulated link needs root, or a user namespace of sshbench's own, and this kernel gives a normal user "
        f"none: {cause}",
        place="--link",
        fix=f"allow unprivileged user namespaces, or run it as root: `{hints.as_root()}`",
        code=ExitCode.USAGE,
    )
