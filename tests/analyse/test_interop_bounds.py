"""An interop soak's arithmetic and plan: the Clopper-Pearson bound, the logins that would bound a rare failure,
and which pairs a client and a server make."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from sshbench.analyse.interop import RARE, logins_to_bound, upper_bound
from sshbench.clients.launch import Detected
from sshbench.clienttypes import client_type
from sshbench.jobs.interop import plan_pairs
from sshbench.model import IN_PROCESS

CURVE, ALIAS, MLKEM = "curve25519-sha256", "curve25519-sha256@libssh.org", "mlkem768x25519-sha256"


def _binom_cdf(k: int, n: int, p: float) -> float:
    """Return P(X <= k) for X ~ Binomial(n, p), summed by hand."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def test_the_bound_reads_as_the_issue_says() -> None:
    assert round(upper_bound(0, 100) * 100, 1) == 3.0  # 0 of 100: at most 3.0 %
    assert upper_bound(5, 5) == 1.0 and upper_bound(0, 0) == 1.0
    assert logins_to_bound(0, 100) == math.ceil(math.log(0.05) / math.log1p(-RARE)) == 1497
    assert logins_to_bound(2, 100) is None  # it fails 2 %: no count of logins bounds it at 0.2 %


@given(st.integers(0, 40), st.integers(1, 400))
def test_the_bound_is_exact_where_it_is_closed_and_leaves_5_percent_beyond_it(k: int, n: int) -> None:
    k = min(k, n)
    p = upper_bound(k, n)
    assert k / n <= p <= 1.0
    if k < n:
        assert math.isclose(_binom_cdf(k, n, p), 0.05, abs_tol=1e-6)  # P(k or fewer | p) is exactly 5 %
    if k == 0:
        assert math.isclose(p, 1 - 0.05 ** (1 / n))


@given(st.integers(0, 3), st.integers(1, 3000))
def test_the_logins_named_do_bound_the_rate_and_no_fewer_would(k: int, n: int) -> None:
    k = min(k, n)
    need = logins_to_bound(k, n)
    if need is None:
        assert k / n >= RARE  # it already fails at least that often
        return
    assert upper_bound(k, need) <= RARE and need >= n
    assert need == n or upper_bound(k, need - 1) > RARE


def _client(name: str, kexes: tuple[str, ...]) -> Detected:
    """Return a client as detected, with the key exchanges it can be pinned to."""
    return Detected(client_type(name), f"{name} 1.0", path="x", kexes=kexes, kex_default=kexes)


def test_pairs_are_the_kexes_both_have_once_each_under_a_name_the_server_speaks() -> None:
    paramiko = _client("paramiko", (ALIAS, CURVE, "ecdh-sha2-nistp256"))
    rows, na = plan_pairs(paramiko, (CURVE, MLKEM, "ecdh-sha2-nistp256"), (), "openssh")
    assert [r.kex for r in rows] == [CURVE, "ecdh-sha2-nistp256"] and not na  # curve25519 once, as the server names it
    assert all(r.mode == IN_PROCESS and r.server == "openssh" for r in rows)
    rows, na = plan_pairs(paramiko, (ALIAS, CURVE), (), "openssh")
    assert [r.kex for r in rows] == [ALIAS]  # both spellings spoken by both: the client's first
    rows, na = plan_pairs(paramiko, (CURVE,), (MLKEM, ALIAS), "dropbear")
    assert [r.kex for r in rows] == [CURVE]  # asked by one name, pinned by the one the server offers
    assert na[0][1] == f"unsupported: paramiko 1.0 has no {MLKEM}"
    sntrup, old = "sntrup761x25519-sha512", "sntrup761x25519-sha512@openssh.com"  # OpenSSH 10 has both names
    openssh10 = _client("openssh", (MLKEM, sntrup, old, CURVE))
    rows, na = plan_pairs(openssh10, (CURVE, ALIAS, old), (), "tinyssh")
    assert [r.kex for r in rows] == [old, CURVE] and not na  # TinySSH offers only the @openssh.com name
    rows, na = plan_pairs(openssh10, (CURVE, ALIAS, old), (sntrup,), "tinyssh")
    assert [r.kex for r in rows] == [old] and not na
    forced, na = plan_pairs(_client("gossh", (MLKEM, CURVE)), (CURVE,), (MLKEM,), "dropbear")
    assert not forced and na[0][1] == f"unsupported: the server offers no {MLKEM} (its offer: {CURVE})"  # n/a
    dbclient = Detected(client_type("dropbear"), "Dropbear v2022.83", path="dbclient")
    assert [(r.kex, r.mode) for r in plan_pairs(dbclient, (CURVE,), (), "openssh")[0]] == [(None, None)]
    assert "cannot be pinned" in plan_pairs(dbclient, (CURVE,), (CURVE,), "openssh")[1][0][1]
    rows, na = plan_pairs(_client("asyncssh", (MLKEM,)), (CURVE,), (), "dropbear")
    assert not rows and "share no key exchange" in na[0][1]
    keys = ("ssh-ed25519", "ecdsa-sha2-nistp256")
    rows, _ = plan_pairs(_client("gossh", (CURVE,)), (CURVE,), (), "openssh", keys)
    assert [(r.kex, r.hostkey) for r in rows] == [(CURVE, k) for k in keys]  # each pair once per host key
    rows, na = plan_pairs(dbclient, (CURVE,), (), "openssh", keys)
    assert not rows and len(na) == 2 and "cannot be pinned to a host key" in na[0][1]
    chacha_only = Detected(client_type("paramiko"), "paramiko 5.1.0", ("aes128-ctr",), path="x", kexes=(CURVE,))
    rows, na = plan_pairs(chacha_only, (CURVE,), (), "tinyssh", ciphers=("chacha20-poly1305@openssh.com",))
    assert not rows and na[0][1] == "unsupported: paramiko shares no cipher with the server"  # n/a, not failures


def test_a_failing_pairs_login_by_hand_comes_from_its_clients_row() -> None:
    from sshbench.analyse.interop import Pair
    from sshbench.render.interop import by_hand

    def made(client: str) -> Pair:
        return Pair(client, "openssh", CURVE, "ssh-ed25519", False, 10, 1, (), 100.0, 0.4, None)

    assert by_hand(made("openssh"), "/opt/ssh") == (
        f"/opt/ssh -o KexAlgorithms={CURVE} -o HostKeyAlgorithms=ssh-ed25519 -i KEY -o UserKnownHostsFile=FILE "
        "-p PORT 127.0.0.1 true"
    )
    assert by_hand(made("dropbear"), None) == "dbclient -T -i KEY -p PORT 127.0.0.1 true"
    assert by_hand(made("russh"), None).startswith("the russh driver (~/.cache/sshbench/drivers/russh-*/)")
    assert by_hand(made("paramiko"), None).startswith("python -m sshbench.clients.drivers.paramiko_driver --port PORT")


def test_a_session_tinyssh_leaves_unopened_behind_asyncssh_s_ignore_is_named_as_the_servers_fault() -> None:
    from sshbench.analyse.interop import Pair
    from sshbench.render.interop import known_cause

    hung = (("TimeoutError: the server did not open the session within 3 s", 20),)
    said = known_cause(Pair("asyncssh", "tinyssh", CURVE, None, False, 30, 20, hung, 66.7, 0.8, None))
    assert said is not None and said.startswith("TinySSH (20230101) at times leaves a session's channel open")
    assert "the server's fault, not the client's nor the wait's" in said
    assert known_cause(Pair("paramiko", "tinyssh", CURVE, None, False, 30, 20, hung, 66.7, 0.8, None)) is None
    assert known_cause(Pair("asyncssh", "openssh", CURVE, None, False, 30, 20, hung, 66.7, 0.8, None)) is None
