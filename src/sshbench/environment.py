"""The environment a run measured in: machine, client, embedded server, emulated hardware and link, CPU pinning.

Stored with every run (flat JSON keys, as printed by --json) and read back as named fields; `compare`
warns when two runs' environments differ.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class EmbeddedInfo:
    """What results must say about an embedded server: which it was, its settings, how its CPU was counted."""

    name: str
    product: str
    settings: tuple[str, ...]
    cpu_accounting: str | None  # e.g. "cgroup v1 (/sys/fs/cgroup/cpuacct/sshbench-x)"
    cpu_unavailable: str | None  # why server CPU is not measured
    receive_window: int | None = None  # bytes the server lets a client send ahead (SSH channel window): bounds uploads
    cpu_share: float | None = None  # --server-cpu: CPUs the server's processes may use

    def to_dict(self) -> dict[str, Any]:
        """Return the flat `server_*` keys stored with runs."""
        return {
            "server_name": self.name,
            "server_product": self.product,
            "server_settings": list(self.settings),
            "server_cpu_accounting": self.cpu_accounting,
            "server_cpu_unavailable": self.cpu_unavailable,
            "server_receive_window": self.receive_window,
            "server_cpu_share": self.cpu_share,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EmbeddedInfo | None:
        """Rebuild from the flat keys (None when the run had no embedded server)."""
        if not data.get("server_name") and not data.get("server_settings"):
            return None
        return cls(
            name=str(data.get("server_name", "")),
            product=str(data.get("server_product", "")),
            settings=tuple(data.get("server_settings") or ()),
            cpu_accounting=data.get("server_cpu_accounting"),
            cpu_unavailable=data.get("server_cpu_unavailable"),
            receive_window=data.get("server_receive_window"),
            cpu_share=data.get("server_cpu_share"),
        )


@dataclass(frozen=True)
class Emulation:
    """Emulated hardware applied to a run, with `openssl speed` evidence that it took effect."""

    name: str
    variables: dict[str, str]
    applies_to: tuple[str, ...]
    not_affected: str
    evidence_tool: str | None = None
    native_mbps: float | None = None
    emulated_mbps: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the stored form."""
        return {
            "name": self.name,
            "variables": dict(self.variables),
            "applies_to": list(self.applies_to),
            "not_affected": self.not_affected,
            "evidence": {
                "tool": self.evidence_tool,
                "native_MBps": self.native_mbps,
                "emulated_MBps": self.emulated_mbps,
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Emulation:
        """Rebuild the stored form."""
        evidence = data.get("evidence") or {}
        return cls(
            name=str(data.get("name", "")),
            variables=dict(data.get("variables") or {}),
            applies_to=tuple(data.get("applies_to") or ()),
            not_affected=str(data.get("not_affected", "")),
            evidence_tool=evidence.get("tool"),
            native_mbps=evidence.get("native_MBps"),
            emulated_mbps=evidence.get("emulated_MBps"),
        )


@dataclass(frozen=True)
class LinkInfo:
    """An emulated link the embedded servers were reached across: what was asked, how, and what was measured."""

    name: str  # the preset, or the text given
    rate_bits: float  # asked, bits/s each way
    rtt_s: float  # asked round trip
    loss: float = 0.0  # asked probability of a drop, each way
    method: str = ""  # e.g. "TUN pair, tbf, delay line (no netem in this kernel)"
    measured_rtt_s: float | None = None  # median TCP connect time before measuring
    measured_up_Bps: float | None = None  # plaintext TCP rate client -> server before measuring
    measured_down_Bps: float | None = None
    check_streams: int | None = None  # parallel TCP streams of that check
    delay_line_one_way_s: float | None = None  # the delay line's calibrated delay each way (it adds its own latency)

    def to_dict(self) -> dict[str, Any]:
        """Return the stored form."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LinkInfo:
        """Rebuild the stored form."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Pinning:
    """Where the ssh client and the embedded server ran, or why pinning was not applied."""

    client_cpu: int | None = None
    server_cpu: int | None = None
    note: str | None = None  # e.g. "not applied: the server is remote"

    def to_json(self) -> dict[str, int] | str | None:
        """Return the stored form: the CPUs, or the note."""
        if self.client_cpu is not None and self.server_cpu is not None:
            return {"client_cpu": self.client_cpu, "server_cpu": self.server_cpu}
        return self.note

    @classmethod
    def from_json(cls, data: Any) -> Pinning | None:
        """Rebuild the stored form (None when pinning was not asked for)."""
        if isinstance(data, Mapping):
            return cls(client_cpu=data.get("client_cpu"), server_cpu=data.get("server_cpu"))
        return cls(note=str(data)) if data else None


@dataclass(frozen=True)
class Environment:
    """The machine, client and server a run measured on; comparisons warn when these differ."""

    cpu_model: str | None = None
    cpu_flags: dict[str, bool] = field(default_factory=dict)  # crypto-relevant CPU flags
    cpus: int | None = None
    kernel: str | None = None
    os: str | None = None
    openssh_client: str | None = None
    openssl: str | None = None
    python: str | None = None
    sshbench: str | None = None
    ssh_audit: str | None = None
    uid: int | None = None
    client_host: str | None = None  # the machine that measured (its host name; `import` keeps the measuring host's)
    server_banner: str | None = None
    target: str | None = None  # where the target was, e.g. "embedded openssh server 127.0.0.1:40122"
    embedded: EmbeddedInfo | None = None
    emulation: Emulation | None = None
    pinning: Pinning | None = None
    client_limit: str | None = None  # the ssh clients' CPU quota and how it is set (--client-cpu)
    link: LinkInfo | None = None  # the emulated link to the embedded servers (--link)
    crypto_ceilings: dict[str, dict[str, float]] = field(default_factory=dict)  # cipher -> side -> openssl MB/s
    tool_versions: dict[str, str] = field(default_factory=dict)  # `tools`: each copy tool's version line
    # `clients`: per client, its `version`, its `default` and `tuned` settings, or why it did not run (`skipped`)
    clients: dict[str, dict[str, str]] = field(default_factory=dict)
    rekeys: dict[str, str] = field(default_factory=dict)  # `interop --rekey`: per server, what a checked login did
    # `tune`: its master connection's own account (`ssh -O conninfo`, OpenSSH 10.3+) and its `check`
    master_conninfo: dict[str, str] = field(default_factory=dict)

    def aes_in_use(self) -> bool | None:
        """Return whether the run's ciphers had the CPU's AES instructions (None when its flags were not read)."""
        if self.emulation is not None and "aesni" in self.emulation.name:
            return False
        return self.cpu_flags.get("aes") if self.cpu_flags else None

    def flags_on(self) -> list[str]:
        """Return the crypto flags this CPU has."""
        return [f for f, on in self.cpu_flags.items() if on]

    def to_dict(self) -> dict[str, Any]:
        """Return the stored form (flat keys, as printed by --json; target keys only for single-target runs)."""
        data: dict[str, Any] = {"cpu_model": self.cpu_model, "cpu_flags": dict(self.cpu_flags)}
        data |= {k: getattr(self, k) for k in _MACHINE}
        if self.target is not None:
            data |= {"server_banner": self.server_banner, "target": self.target}
        if self.embedded is not None:
            data.update(self.embedded.to_dict())
        data["emulation"] = None if self.emulation is None else self.emulation.to_dict()
        data["pinning"] = None if self.pinning is None else self.pinning.to_json()
        if self.client_limit is not None:
            data["client_limit"] = self.client_limit
        if self.link is not None:
            data["link"] = self.link.to_dict()
        if self.crypto_ceilings:
            data["crypto_ceilings_MBps"] = self.crypto_ceilings
        if self.tool_versions:
            data["tool_versions"] = self.tool_versions
        if self.clients:
            data["clients"] = self.clients
        if self.rekeys:
            data["rekeys"] = self.rekeys
        if self.master_conninfo:
            data["master_conninfo"] = self.master_conninfo
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Environment:
        """Rebuild the stored form; keys older runs did not store stay None."""
        emulation = data.get("emulation")
        return cls(
            **{k: data.get(k) for k in ("cpu_model", *_MACHINE, "server_banner", "target")},
            cpu_flags=dict(data.get("cpu_flags") or {}),
            embedded=EmbeddedInfo.from_dict(data),
            emulation=Emulation.from_dict(emulation) if emulation else None,
            pinning=Pinning.from_json(data.get("pinning")),
            client_limit=data.get("client_limit"),
            link=LinkInfo.from_dict(data["link"]) if data.get("link") else None,
            crypto_ceilings=dict(data.get("crypto_ceilings_MBps") or {}),
            tool_versions=dict(data.get("tool_versions") or {}),
            clients={k: dict(v) for k, v in (data.get("clients") or {}).items()},
            rekeys=dict(data.get("rekeys") or {}),
            master_conninfo=dict(data.get("master_conninfo") or {}),
        )


_MACHINE = (
    "cpus",
    "kernel",
    "os",
    "openssh_client",
    "openssl",
    "python",
    "sshbench",
    "ssh_audit",
    "uid",
    "client_host",
)
