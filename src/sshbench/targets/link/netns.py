"""An emulated link: embedded servers run in a private network namespace joined to sshbench's by a shaped link.

Two hosts on one machine: the servers listen on an address inside a namespace of ours (a /30 of the
198.18.0.0/15 benchmarking range, RFC 2544); the ssh clients stay where sshbench runs and reach them
across a pair of devices whose egress is shaped, so each direction has the asked rate and half the RTT.

- Where the kernel has `netem`: a veth pair, `netem delay rate` on each end (loss added after the check).
- Where it has not (this kind of machine): `tbf` shapes the rate on each end of a pair of TUN devices, and
  the delay line (delayline.py, one process) carries packets between them after the one-way delay.
  Below ~0.1 ms RTT no delay is added: a veth pair with `tbf` alone.
- As a normal user (userns.py): sshbench's own process moved into a user namespace and a network namespace
  of its own, which is the client's end; the servers' namespace is held by a process (`unshare --net`)
  and entered with `nsenter`. Without netem the delay line bridges two veth pairs with packet sockets
  (/dev/net/tun is the machine's, not the namespace's), `tbf` shaping each pair's outer end as above.

The link is verified before anything is measured (linkcheck.py) and recorded with the run. The namespace
(or the process holding it) and the delay line are recorded in the lease as they are made: however sshbench
ends, its devices, qdiscs and processes go with them (deleting the namespace deletes the devices in it and
their peers; the TUN devices vanish with the delay line; a normal user's namespaces go with their processes).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import select
import subprocess
import sys
import time
from types import TracebackType

from sshbench import hints, leases
from sshbench.environment import LinkInfo
from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh.proc import require_binary, run_quick
from sshbench.targets.link import userns
from sshbench.targets.link.links import LinkCheck, LinkSpec
from sshbench.targets.servers.base import dies_with_parent

VETH_RTT = 0.0001  # at or below it no delay is added (a veth pair: ~0.05 ms, bench_link.py --presets 1gbit,0ms)
BENCH_NET = (198 << 24) | (18 << 16)  # 198.18.0.0/15: for benchmarking, never routed
BLOCKS = 1 << 15  # /30 blocks in it
READY_TIMEOUT = 10.0
_COUNTER = itertools.count(1)


JUMBO = 9000  # bytes: the largest MTU a link gets (docs/measuring.md, "A link's frame size")
BURST = 0.005  # seconds of the rate that tbf's bucket holds, at least two frames (docs/measuring.md, "A link's bucket")


def mtu_for(rate: float) -> int:
    """Return the link MTU: ~2 ms of the rate, between 1500 bytes and a jumbo frame (fewer packets at high rates;
    with 64 KiB frames some TCP streams' receive windows never grew past ~85 KB)."""
    return int(min(JUMBO, max(1500, rate / 8 * 0.002)))


def require_admin() -> None:
    """Fail unless this process may create namespaces and shape traffic (root or CAP_NET_ADMIN)."""
    if os.geteuid() == 0:
        return
    with open("/proc/self/status") as f:
        caps = next((line.split()[1] for line in f if line.startswith("CapEff:")), "0")
    if int(caps, 16) & (1 << 12):
        return
    raise SshbenchError(
        "emulating a link needs root (CAP_NET_ADMIN): it creates a network namespace and shapes its devices",
        place="--link",
        fix=f"run it as root: `{hints.as_root()}`; or measure a real link: `{hints.sshbench('run', 'HOST')}`",
        code=ExitCode.USAGE,
    )


class EmulatedLink:
    """A private network namespace for embedded servers, reached across a shaped, verified link."""

    def __init__(self, spec: LinkSpec) -> None:
        self.spec = spec
        self.ip = require_binary("ip", "iproute2")
        self.tc = require_binary("tc", "iproute2")
        n = next(_COUNTER)
        self.ns = f"sshbench-{os.getpid()}-{n}"
        tag = f"{os.getpid() % 1_000_000}x{n}"
        self.client_dev, self.server_dev = f"sbc{tag}"[:15], f"sbs{tag}"[:15]
        self.bridge_devs = (f"sbC{tag}"[:15], f"sbS{tag}"[:15])  # the delay line's veth ends (a normal user's link)
        self.private = userns.entered()  # a normal user's link: no named namespace, a holder process instead
        self.holder: subprocess.Popen[bytes] | None = None
        self.identity = ""  # the servers' namespace as the kernel names it (net:[INODE]), a normal user's link
        self.nsenter = require_binary("nsenter", "util-linux") if self.private else ""
        self.client_address = self.server_address = ""
        self.delay_line: subprocess.Popen[bytes] | None = None
        self.netem = False
        self.method = ""
        self.check: LinkCheck | None = None
        self._mtu = 1500
        self.one_way: float | None = None  # the delay line's delay each way, once calibrated

    def __enter__(self) -> EmulatedLink:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # --- building it --------------------------------------------------------------------------------
    def start(self) -> None:
        """Create the namespace and the link and shape it (loss comes once it is checked: `checked`)."""
        require_admin()
        if self.private:
            self._hold_namespace()
        else:
            self._run(self.ip, "netns", "add", self.ns)
            leases.keeper().namespace(self.ns)
        self._run(*self.wrap([self.ip, "link", "set", "lo", "up"]))
        self.client_address, self.server_address = self._free_block()
        self.netem = self._has_netem()
        mtu = mtu_for(self.spec.rate)
        if self.netem or self.spec.rtt <= VETH_RTT:
            self._veth(mtu)
        elif self.private:
            self._bridged_pairs(mtu)
        else:
            self._tun_pair(mtu)
        self._addresses(mtu)
        self._shape(mtu)

    def checked(self, check: LinkCheck) -> None:
        """Record the link's check (linkcheck.verify) and switch its loss on: loss would spoil the check."""
        self.check = check
        if self.spec.loss:
            self.set_loss(self.spec.loss)

    def _free_block(self) -> tuple[str, str]:
        """Choose a /30 of 198.18.0.0/15 that no address or route here uses; return (client, server)."""
        used = self._run(self.ip, "-4", "-o", "addr", "show").stdout + self._run(self.ip, "-4", "route").stdout
        start = (os.getpid() * 31 + next(_COUNTER) * 7919) % BLOCKS
        for i in range(64):
            base = BENCH_NET + ((start + i) % BLOCKS) * 4
            client, server = _dotted(base + 1), _dotted(base + 2)
            if f" {client}" not in used and f" {server}" not in used:
                return client, server
        raise SshbenchError(
            "no free address block for the emulated link in 198.18.0.0/15",
            place="--link",
            fix="remove stale addresses of 198.18.0.0/15 (ip -4 addr), or free some of that range",
            code=ExitCode.USAGE,
        )

    def _has_netem(self) -> bool:
        """Return True when the kernel has netem (tried on the namespace's own loopback, never the host's)."""
        if run_quick(self.wrap([self.tc, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"])).returncode:
            return False
        self._run(*self.wrap([self.tc, "qdisc", "del", "dev", "lo", "root"]))
        return True

    def _hold_namespace(self) -> None:
        """Start the process that holds the servers' network namespace (a normal user's link); wait until it does."""
        unshare, sleep = require_binary("unshare", "util-linux"), require_binary("sleep", "coreutils")
        ours = os.readlink("/proc/self/ns/net")
        self.holder = subprocess.Popen(
            dies_with_parent([unshare, "--net", "--", sleep, "infinity"]),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        leases.keeper().process(self.holder.pid)
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline and self.holder.poll() is None:
            with contextlib.suppress(OSError):
                identity = os.readlink(f"/proc/{self.holder.pid}/ns/net")
                if identity not in (ours, ""):
                    self.ns = f"/proc/{self.holder.pid}/ns/net"  # `ip ... netns` and `nsenter --net` take it
                    self.identity = identity
                    leases.keeper().namespace(identity)  # what is left in it is killed should sshbench die
                    return
            time.sleep(0.005)
        stderr = self.holder.stderr
        err = stderr.read().decode(errors="replace").strip() if stderr and self.holder.poll() is not None else ""
        raise SshbenchError(
            f"the servers' network namespace was not made: {err or 'unshare --net gave no answer'}",
            place="--link (as a normal user, in a user namespace)",
            fix=f"run it as root: `{hints.as_root()}`",
            code=ExitCode.USAGE,
        )

    def _veth(self, mtu: int) -> None:
        """Create a veth pair with one end in the namespace."""
        self._run(self.ip, "link", "add", self.client_dev, "type", "veth", "peer", "name", self.server_dev)
        self._run(self.ip, "link", "set", self.server_dev, "netns", self.ns)
        self.method = "veth pair" + (", netem" if self.netem else ", tbf (no delay added)") + self._whose()

    def _whose(self) -> str:
        """Return what the method says of a normal user's link."""
        return "; in a user namespace of sshbench's own, no root" if self.private else ""

    def _bridged_pairs(self, mtu: int) -> None:
        """Create two veth pairs, the server's outer end in the namespace, and the delay line bridging the inner
        ends with packet sockets (a normal user's link where netem is missing)."""
        inner_client, inner_server = self.bridge_devs
        self._run(self.ip, "link", "add", self.client_dev, "type", "veth", "peer", "name", inner_client)
        self._run(self.ip, "link", "add", self.server_dev, "type", "veth", "peer", "name", inner_server)
        self._run(self.ip, "link", "set", self.server_dev, "netns", self.ns)
        for dev in self.bridge_devs:  # no addresses: no traffic of their own, only what the delay line carries
            self._run(self.ip, "link", "set", dev, "addrgenmode", "none")
            self._run(self.ip, "link", "set", dev, "mtu", str(mtu), "up")
        self._start_delay_line(mtu, [inner_client, inner_server, "--packet"])
        self.method = "veth pairs, tbf, a delay line on packet sockets, no netem in this kernel" + self._whose()
        self.one_way = self.spec.rtt / 2

    def _tun_pair(self, mtu: int) -> None:
        """Start the delay line with its two TUN devices, and move the server's into the namespace."""
        self._start_delay_line(mtu, [self.client_dev, self.server_dev])
        self._run(self.ip, "link", "set", self.server_dev, "netns", self.ns)
        self.method = "TUN pair, tbf, delay line (no netem in this kernel)"
        self.one_way = self.spec.rtt / 2

    def _start_delay_line(self, mtu: int, devices: list[str]) -> None:
        """Start the delay line on these devices and wait for its `ready`."""
        argv = [sys.executable, "-m", "sshbench.targets.link.delayline", *devices]
        self.delay_line = subprocess.Popen(
            dies_with_parent([*argv, "--delay", repr(self.spec.rtt / 2), "--limit", str(max(64 << 20, 4 * mtu))]),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        leases.keeper().process(self.delay_line.pid)
        assert self.delay_line.stdout is not None
        ready, _, _ = select.select([self.delay_line.stdout], [], [], READY_TIMEOUT)
        line = self.delay_line.stdout.readline() if ready else b""
        if line.strip() != b"ready":
            stderr = self.delay_line.stderr
            err = stderr.read().decode(errors="replace") if stderr and self.delay_line.poll() is not None else ""
            last = err.strip().splitlines()[-1:]
            raise SshbenchError(
                f"the delay line did not start: {last[0] if last else 'no answer'}",
                place="--link",
                fix="check that /dev/net/tun exists (modprobe tun) and that sshbench runs as root"
                if not self.private
                else "check that the kernel has packet sockets (CONFIG_PACKET), or run it as root",
                code=ExitCode.USAGE,
            )

    def _addresses(self, mtu: int) -> None:
        """Give each end its address (point to point) and MTU, and bring them up."""
        self._run(self.ip, "link", "set", self.client_dev, "mtu", str(mtu), "up")
        self._run(self.ip, "addr", "add", self.client_address, "peer", self.server_address, "dev", self.client_dev)
        inside = [self.ip, "link", "set", self.server_dev, "mtu", str(mtu), "up"]
        self._run(*self.wrap(inside))
        address = [self.ip, "addr", "add", self.server_address, "peer", self.client_address, "dev", self.server_dev]
        self._run(*self.wrap(address))

    def _qdisc(self, mtu: int, loss: float) -> list[str]:
        """Return the qdisc arguments that shape one direction."""
        rate = f"{int(self.spec.rate)}bit"
        if self.netem:
            packets = max(1000, int(2 * self.spec.bdp / mtu) + 10)
            extra = ["loss", f"{loss * 100:g}%"] if loss else []
            return ["netem", "delay", f"{self.spec.rtt / 2 * 1e6:.0f}us", "rate", rate, "limit", str(packets), *extra]
        burst = int(max(2 * mtu + 1000, self.spec.rate_bytes * BURST))
        limit = int(max(2 * self.spec.bdp, 4 * mtu)) + burst  # two BDPs of queue: parallel TCP streams fill the link
        return ["tbf", "rate", rate, "burst", str(burst), "limit", str(limit)]

    def _shape(self, mtu: int, loss: float = 0.0, verb: str = "add") -> None:
        """Shape both directions: the client's end (uploads) and the server's (downloads)."""
        self._run(self.tc, "qdisc", verb, "dev", self.client_dev, "root", *self._qdisc(mtu, loss))
        self._run(*self.wrap([self.tc, "qdisc", verb, "dev", self.server_dev, "root", *self._qdisc(mtu, loss)]))
        self._mtu = mtu

    # --- using it -----------------------------------------------------------------------------------
    def wrap(self, argv: list[str]) -> list[str]:
        """Return argv run inside the namespace (the wrapper embedded servers get)."""
        if self.private:
            return [self.nsenter, f"--net={self.ns}", "--", *argv]
        return [self.ip, "netns", "exec", self.ns, *argv]

    def set_delay(self, one_way: float) -> None:
        """Change the delay line's one-way delay (calibration)."""
        self._tell(f"delay {one_way!r}")
        self.one_way = one_way

    def set_loss(self, loss: float) -> None:
        """Start dropping packets with this probability in each direction."""
        if self.netem:
            self._shape(self._mtu, loss, "change")
        else:
            self._tell(f"loss {loss!r}")

    def _tell(self, line: str) -> None:
        """Send one control line to the delay line."""
        if self.delay_line is not None and self.delay_line.stdin is not None:
            self.delay_line.stdin.write(line.encode() + b"\n")
            self.delay_line.stdin.flush()

    def info(self) -> LinkInfo:
        """Return what the run records about the link: asked, how it is made, and what was measured."""
        check = self.check
        return LinkInfo(
            name=self.spec.name,
            rate_bits=self.spec.rate,
            rtt_s=self.spec.rtt,
            loss=self.spec.loss,
            method=self.method,
            measured_rtt_s=check.rtt if check else None,
            measured_up_Bps=check.up if check else None,
            measured_down_Bps=check.down if check else None,
            check_streams=check.streams if check else None,
            delay_line_one_way_s=self.one_way,
        )

    # --- tearing it down ----------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the delay line, delete the namespace (and with it every device and qdisc of the link)."""
        if self.delay_line is not None:
            if self.delay_line.stdin is not None:
                self.delay_line.stdin.close()  # its end of input: it exits
            try:
                self.delay_line.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.delay_line.kill()
                self.delay_line.wait(timeout=3)
            leases.keeper().forget(pid=self.delay_line.pid)
            self.delay_line = None
        if self.private:
            self._release_namespace()
            return
        leases.remove_netns(self.ns)
        deadline = time.monotonic() + 3
        while os.path.exists(f"/sys/class/net/{self.client_dev}") and time.monotonic() < deadline:
            time.sleep(0.02)  # the namespace's devices go in the kernel's own time
        leases.keeper().forget(netns=self.ns)

    def _release_namespace(self) -> None:
        """Delete a normal user's devices in sshbench's namespace and stop the servers' namespace's holder."""
        for dev in (self.client_dev, self.bridge_devs[0]):  # deleting an end deletes its peer
            run_quick([self.ip, "link", "del", dev])
        if self.holder is not None:
            self.holder.kill()
            self.holder.wait(timeout=3)
            leases.keeper().forget(pid=self.holder.pid)
            self.holder = None
        if self.identity:
            leases.remove_netns(self.identity)  # a server's straggler, if any, keeps it: it goes now
            leases.keeper().forget(netns=self.identity)

    def _run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        """Run one ip/tc command, or fail naming it and what it printed."""
        done = run_quick(argv)
        if done.returncode != 0:
            raise SshbenchError(
                f"setting up the emulated link failed: {' '.join(argv)}: {done.stderr.strip()}",
                place="--link",
                fix="run as root on a kernel with network namespaces, veth/tun and tbf (iproute2 installed)",
                code=ExitCode.USAGE,
            )
        return done


def _dotted(address: int) -> str:
    """Return an IPv4 address as text."""
    return ".".join(str((address >> shift) & 255) for shift in (24, 16, 8, 0))
