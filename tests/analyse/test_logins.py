"""Where a login's time goes after its key exchange (issue 55): the steps' medians and the waits named."""

from __future__ import annotations

from sshbench.analyse.logins import login_split
from sshbench.model import Kind, Scenario
from sshbench.records import StoredScenario
from sshbench.render.logins import login_lines
from sshbench.samples import Sample


def _login(sc: Scenario, i: int, service: float, channel: float, tried: float = 0.0) -> Sample:
    """Return a login whose service request took `service` and its channel `channel` (seconds), little else."""
    auth = {"auth.service": service, "auth.methods": 0.006, "auth.offer": 0.0008, "auth.signature": 0.0105}
    session = {"session.channel": channel, "session.command": 0.003, "session.close": 0.0014}
    phases = {"tcp": 0.0001, "auth": sum(auth.values()), **auth, "session": sum(session.values()), **session}
    return Sample(sc, i, False, True, 0.14, 0.14, phases=tuple({**phases, "auth.tried": tried}.items()))


def test_two_waits_of_the_delayed_ack_shape_are_named_and_the_quick_steps_are_not() -> None:
    """The embedded OpenSSH 9.2's logins on loopback: +43 ms in the service request, +42 ms before the session
    channel is confirmed (a packet capture shows the same two pauses), the rest a few ms."""
    sc = Scenario(Kind.LATENCY, kex="curve25519-sha256", hostkey="ssh-ed25519")
    logins = [_login(sc, i, 0.043 + i * 1e-4, 0.042 + i * 1e-4) for i in range(1, 8)]
    split = login_split([StoredScenario(0, 0, sc, None, tuple(logins))])
    assert split is not None and split.logins == 7
    assert [s.name for s in split.steps if s.waited] == ["auth.service", "session.channel"]
    assert 0.0855 < split.waits < 0.0857 and split.tried == 0
    said = "\n".join(login_lines(split))
    assert "authentication 61 ms: service 43.4 (waited), methods 6.0, offer 0.8, signature 10.5" in said
    assert "the path's round trip 0.1 ms" in said
    assert "session 47 ms: channel 42.4 (waited), command 3.0, close 1.4" in said
    assert "the shape of a delayed-ACK wait" in said and "quickack 1" in said and "tried and refused" not in said
    doc = split.to_dict()
    assert [s["step"] for s in doc["steps"] if s["delayed_ack_wait"]] == ["auth.service", "session.channel"]


def test_keys_refused_are_counted_and_logins_without_steps_say_nothing() -> None:
    sc = Scenario(Kind.LATENCY)
    split = login_split([StoredScenario(0, 0, sc, None, tuple(_login(sc, i, 0.001, 0.001, 2.0) for i in (1, 2, 3)))])
    assert split is not None and split.waits == 0 and split.tried == 2
    assert "2 method(s) or key(s) tried and refused" in "\n".join(login_lines(split))
    assert split.advice() == []  # nothing slow
    bare = Sample(sc, 1, False, True, 0.1, 0.1, phases=(("tcp", 0.001), ("auth", 0.05)))  # dbclient: no steps
    assert login_split([StoredScenario(0, 0, sc, None, (bare,))]) is None


def test_a_slow_list_of_methods_and_a_slow_command_point_to_dns_and_the_shell_start_up() -> None:
    """A host whose sshd looks up the client's name (UseDNS yes) and whose login shell reads heavy start-up files:
    `ssh 127.0.0.1 true` to the system's sshd ran the command for 113 ms through a login shell (the issue's)."""
    sc = Scenario(Kind.LATENCY)
    slow = []
    for i in (1, 2, 3):
        phases = dict(_login(sc, i, 0.001, 0.001).phases) | {"auth.methods": 0.25, "session.command": 0.113}
        slow.append(Sample(sc, i, False, True, 0.5, 0.5, phases=tuple(phases.items())))
    split = login_split([StoredScenario(0, 0, sc, None, tuple(slow))])
    assert split is not None and split.waits == 0
    said = "\n".join(login_lines(split))
    assert "the server took 250 ms to list its methods" in said and "`UseDNS no`" in said
    assert "the command took 113 ms on the server" in said and "start-up files" in said
