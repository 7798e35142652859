"""Destinations are validated and normalised before ssh sees them (no option injection)."""

import pytest

from sshbench.errors import SshbenchError
from sshbench.ssh.destination import normalize_destination


def test_destination_normalisation() -> None:
    assert normalize_destination("host:2222") == "ssh://host:2222"
    assert normalize_destination("user@host:22") == "ssh://user@host:22"
    assert normalize_destination("alias") == "alias"
    assert normalize_destination("user@host") == "user@host"
    for bad in ("-oProxyCommand=touch /tmp/x", "host;rm", "a b"):
        with pytest.raises(SshbenchError):
            normalize_destination(bad)
