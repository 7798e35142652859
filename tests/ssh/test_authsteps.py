"""A login after its key exchange, split from `ssh -v` lines (issue 55: where a login's time goes)."""

from __future__ import annotations

import pytest

from sshbench.authnames import TRIED
from sshbench.ssh.authsteps import login_steps

LOGIN = [  # OpenSSH 9.2's client against the embedded server (its own lines), a key refused first; seconds
    (0.1164, "debug1: SSH2_MSG_NEWKEYS received"),
    (0.1164, "debug1: rekey in after 134217728 blocks"),
    (0.1165, "debug1: Will attempt key: /tmp/k/client_ed25519 ED25519 SHA256:bbb explicit"),
    (0.1165, "debug1: SSH2_MSG_EXT_INFO received"),
    (0.1595, "debug1: SSH2_MSG_SERVICE_ACCEPT received"),
    (0.1656, "debug1: Authentications that can continue: publickey"),
    (0.1656, "debug1: Next authentication method: publickey"),
    (0.1656, "debug1: Offering public key: /tmp/k/other ED25519 SHA256:aaa explicit"),
    (0.1660, "debug1: Authentications that can continue: publickey"),
    (0.1660, "debug1: Offering public key: /tmp/k/client_ed25519 ED25519 SHA256:bbb explicit"),
    (0.1668, "debug1: Server accepts key: /tmp/k/client_ed25519 ED25519 SHA256:bbb explicit"),
    (0.1773, 'Authenticated to 127.0.0.1 ([127.0.0.1]:33523) using "publickey".'),
    (0.1774, "debug1: Entering interactive session."),
    (0.2193, "debug1: Sending command: true"),
    (0.2223, "debug1: client_input_channel_req: channel 0 rtype exit-status reply 0"),
    (0.2225, "debug1: Exit status 0"),
]


def test_a_login_after_its_key_exchange_splits_into_its_steps_and_counts_the_key_refused() -> None:
    steps = dict(login_steps(LOGIN, 0.2237))
    expected = {
        "auth.service": 0.0431,
        "auth.methods": 0.0061,
        "auth.refused": 0.0004,
        "auth.offer": 0.0008,
        "auth.signature": 0.0105,
        "session.channel": 0.0420,
        "session.command": 0.0030,
        "session.close": 0.0014,
        TRIED: 1.0,
    }
    assert steps == pytest.approx(expected, abs=1e-9)
    assert sum(v for k, v in steps.items() if k != TRIED) == pytest.approx(0.2237 - 0.1164)


def test_a_refused_gssapi_method_is_counted_and_a_login_without_its_end_says_nothing() -> None:
    gssapi = [
        *LOGIN[:6],
        (0.1656, "debug1: Next authentication method: gssapi-with-mic"),
        (0.1700, "debug1: No credentials were supplied, or the credentials were unavailable or inaccessible"),
        *LOGIN[6:7],
        *LOGIN[9:],
    ]
    steps = dict(login_steps(gssapi, 0.2237))
    assert steps[TRIED] == 1.0 and steps["auth.refused"] == pytest.approx(0.0004)
    assert login_steps(LOGIN[:11], 0.2) == ()  # no `Authenticated to`: a failed login
    assert login_steps([(0.2, "Authenticated to x"), (0.3, "debug1: SSH2_MSG_NEWKEYS received")], 0.4) == ()
