"""One process per login with an exec job: its stdin is the bytes up, its stdout is counted against the bytes down
and removed; a short download fails the login with the counts."""

from __future__ import annotations

from pathlib import Path

from sshbench.measure.load import ExecJob, Finished, OpenLoop


def test_a_short_download_fails_its_login_and_every_file_is_removed(tmp_path: Path) -> None:
    send = tmp_path / "up"
    send.write_bytes(bytes(1024))
    ended: list[Finished] = []
    # login 0 reads the 1 KiB sent and writes 64 bytes back; login 1 writes 10: short
    script = "wc -c >&2; head -c {} /dev/zero"
    loop = OpenLoop(
        lambda i: ["sh", "-c", script.format(64 if i == 0 else 10)], ended.append, ExecJob(send, 64, tmp_path)
    )
    loop.run([0.0, 0.0])
    by = {f.index: f for f in ended}
    assert by[0].error is None and by[1].error == "short download: 10 of 64 bytes"
    assert all(f.cpu is not None and f.cpu > 0 for f in ended)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["up"]
