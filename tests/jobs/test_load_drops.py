"""A failed login under load claims the drop the server's log names: by source address and port where its words
give them (the Go generator), by source address where they say the connection closed before the banner (one ssh
per login); each drop explains one login at most, and a log line written half is read once it is whole."""

from __future__ import annotations

from pathlib import Path

from sshbench.analyse.load import cause
from sshbench.jobs.loadstore import explained
from sshbench.measure.load import Finished
from sshbench.targets.servers.droplog import DropLog

LINE = "drop connection #{n} from [127.0.0.{a}]:{port} on [127.0.0.1]:2222 past MaxStartups"
SSH_WORDS = "Connection closed by 127.0.0.1 port 2222 (exit status 255)"


def failed(i: int, words: str) -> Finished:
    """Return login i, failed with these words."""
    return Finished(i, 0.0, 0.0, 0.01, None, words)


def test_the_go_generators_source_port_claims_its_own_drop(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("Server listening on 127.0.0.1 port 2222.\n" + LINE.format(n=11, a=3, port=40181) + "\n")
    drops = DropLog(log)
    other = failed(0, "127.0.0.3:40999->127.0.0.1:2222: ssh: handshake failed: EOF")
    assert explained(other, "127.0.0.3", drops) is None  # same address, another port: not this drop
    mine = explained(failed(1, "127.0.0.3:40181->127.0.0.1:2222: ssh: handshake failed: EOF"), "127.0.0.3", drops)
    assert mine is not None and mine.startswith("dropped by the server past MaxStartups")
    assert "#11 from [127.0.0.3]:40181" in mine and mine.endswith("ssh: handshake failed: EOF")
    assert cause(mine) == "dropped by the server past MaxStartups (the server's log)"
    again = failed(2, "127.0.0.3:40181->127.0.0.1:2222: ssh: handshake failed: EOF")
    assert explained(again, "127.0.0.3", drops) is None  # claimed once


def test_one_ssh_per_login_claims_a_drop_of_its_address_only_for_a_close_before_the_banner(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(LINE.format(n=4, a=2, port=50000) + "\n" + LINE.format(n=5, a=4, port=50001)[:30])  # half a line
    drops = DropLog(log)
    assert explained(failed(0, "Permission denied (publickey) (exit status 255)"), "127.0.0.2", drops) is None
    assert explained(failed(1, SSH_WORDS), "127.0.0.4", drops) is None  # its line is not whole yet
    with open(log, "a") as f:
        f.write(LINE.format(n=5, a=4, port=50001)[30:] + "\n")
    assert explained(failed(1, SSH_WORDS), "127.0.0.4", drops) is not None
    assert explained(failed(2, SSH_WORDS), "127.0.0.2", drops) is not None
    assert explained(failed(3, SSH_WORDS), "127.0.0.2", drops) is None  # no drop of its own left
    assert explained(Finished(4, 0.0, 0.0, 0.01, None), "127.0.0.2", drops) is None  # served


def test_drops_before_a_burst_are_not_claimed_by_it(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(LINE.format(n=1, a=2, port=1000) + "\n")
    drops = DropLog(log)
    drops.skip()
    assert explained(failed(0, SSH_WORDS), "127.0.0.2", drops) is None
    assert DropLog(tmp_path / "absent.log").claim("127.0.0.2", None) is None  # no log: nothing claimed
