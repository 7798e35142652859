"""Discovery: what the client offers, what the server offers, what they negotiate, and how each rates."""

from __future__ import annotations

from sshbench.discovery import ALGORITHM_KINDS, Discovery, Profile, ServerOffer, is_measurable
from sshbench.errors import SshbenchError
from sshbench.model import STRICT_PROFILE
from sshbench.ssh import audit
from sshbench.ssh.destination import LOGIN_TIMEOUT, Target
from sshbench.ssh.proc import run_quick, run_timed
from sshbench.ssh.text import parse_config_dump, parse_negotiated, parse_query, ssh_failure

QUERIES = {"kex": "kex", "hostkey": "HostKeyAlgorithms", "cipher": "cipher", "mac": "mac"}
DEFAULT_KEYWORDS = {"kex": "kexalgorithms", "hostkey": "hostkeyalgorithms", "cipher": "ciphers", "mac": "macs"}


def client_algorithms(ssh: str) -> dict[str, tuple[str, ...]]:
    """Return what this ssh client supports, per kind, in its own order (`ssh -Q`)."""
    return {kind: parse_query(run_quick([ssh, "-Q", query]).stdout) for kind, query in QUERIES.items()}


def client_defaults(ssh: str, target: Target) -> dict[str, tuple[str, ...]]:
    """Return the client's default proposal per kind for this target, in preference order (`ssh -G`)."""
    done = run_quick([ssh, *target.options, "-G", target.destination])
    dump = parse_config_dump(done.stdout) if done.returncode == 0 else {}
    return {
        kind: tuple(dump.get(key, "").split(",")) if dump.get(key) else () for kind, key in DEFAULT_KEYWORDS.items()
    }


def negotiate(ssh: str, target: Target, name: str, options: dict[str, str]) -> Profile:
    """Connect once with the given -o options and report what was negotiated."""
    extra = [arg for k, v in options.items() for arg in ("-o", f"{k}={v}")]
    done = run_timed(target.argv(ssh, extra, "true"), timeout=LOGIN_TIMEOUT)
    if done.returncode != 0 or done.timed_out:
        return Profile(name, None, ssh_failure(done.texts, done.timed_out, LOGIN_TIMEOUT))
    return Profile(name, parse_negotiated(done.texts), None)


def probe_server(target: Target) -> tuple[ServerOffer | None, str | None]:
    """Read the server's KEXINIT (no login); return (offer, None) or (None, why it could not be read)."""
    if target.proxied:
        return None, "host is reached through ProxyJump/ProxyCommand; its KEXINIT cannot be probed directly"
    try:
        return audit.probe(target.host, target.port), None
    except SshbenchError as exc:
        return None, exc.cause


def discover(ssh: str, target: Target) -> Discovery:
    """Query the client, probe the server's KEXINIT, and connect with the default and strict profiles."""
    client = client_algorithms(ssh)
    server, server_error = probe_server(target)
    default = negotiate(ssh, target, "default", {})
    unreachable = server is None and default.negotiated is None  # the strict profile would only wait again
    strict = (
        Profile("strict", None, default.failure) if unreachable else negotiate(ssh, target, "strict", STRICT_PROFILE)
    )
    profiles = (default, strict)
    names: dict[str, set[str]] = {k: set(v) for k, v in client.items()}
    for kind, offered in ({} if server is None else server.lists()).items():
        names[kind] |= set(offered)
    ratings = {k: {n: audit.rate(k, n) for n in sorted(names[k]) if is_measurable(k, n)} for k in ALGORITHM_KINDS}
    defaults = client_defaults(ssh, target)
    return Discovery(client, defaults, server, server_error, profiles, ratings, ssh_audit_version=audit.version())
