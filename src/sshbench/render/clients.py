"""Terminal presentation of a `clients` run: each client's version and settings (or why it did not run), and the
library to use per job with the code it stands for (`recommend`)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape

from sshbench.analyse.claims.clients import Pick
from sshbench.model import Scenario
from sshbench.records import RunRecord
from sshbench.units import format_value


def print_clients(console: Console, run: RunRecord) -> None:
    """Print each client: what it is, its version, its default and tuned settings, or why it was skipped."""
    clients = run.environment.clients
    if not clients:
        return
    console.print("Clients (default: as their users run them; tuned: the settings named):", style="bold",
                  highlight=False)  # fmt: skip
    for name, about in clients.items():
        if "skipped" in about:
            console.print(f"  {name}: [dim]not measured[/]: {escape(about['skipped'])}", highlight=False)
            continue
        start = about.get("start_s")
        started = f"; starts and loads in {format_value('ms', float(start))} ms" if start else ""
        console.print(f"  {name}: {escape(about.get('version', '?'))}{started}", highlight=False)
        console.print(f"    default: {escape(about.get('default', ''))}", highlight=False)
        if "tuned" in about:
            console.print(f"    tuned: {escape(about['tuned'])}", highlight=False)
        if about.get("kind") == "binary" and name != "openssh":
            console.print("    it says nothing when its command is sent: its CPU per GiB includes its login",
                          highlight=False, style="dim")  # fmt: skip


TUNED_WINDOW = "64 * 2**20"  # the tuned drivers' values (clients/drivers/*; tests/render/test_clients.py checks)
TUNED_PACKET = "2**18"
CONNECT = {
    "paramiko": "client = paramiko.SSHClient(); client.load_system_host_keys(); client.connect(HOST, username=USER{})",
    "asyncssh": "conn = await asyncssh.connect(HOST, username=USER{})",
    "libssh": "session = Session(); session.connect(host=HOST, user=USER, private_key=open(KEY, 'rb').read())",
    "libssh2": "session = Session(); session.handshake(socket.create_connection((HOST, 22))); check "
    "session.hostkey() with session.knownhost_init() (readfile, checkp); "
    "session.userauth_publickey_fromfile(USER, KEY)",
}
TUNED_CONNECT = {
    "paramiko": ", transport_factory=lambda sock, **kw: paramiko.Transport(sock, default_window_size="
    f"{TUNED_WINDOW}, default_max_packet_size={TUNED_PACKET}, **kw)",
    "asyncssh": f", window={TUNED_WINDOW}, max_pktsize={TUNED_PACKET}",
}
WORK = {  # (client, job) -> the code that did it
    ("paramiko", "download"): "chan = client.get_transport().open_session(); chan.exec_command(COMMAND); "
    "while data := chan.recv(65536): out.write(data)",
    ("paramiko", "upload"): "chan = client.get_transport().open_session(); chan.exec_command(COMMAND); "
    "chan.sendall(data); chan.shutdown_write()",
    ("paramiko", "tool download"): "client.open_sftp().get(REMOTE, LOCAL)",
    ("paramiko", "tool upload"): "client.open_sftp().put(LOCAL, REMOTE)",
    ("asyncssh", "download"): "await conn.run(COMMAND, stdout=out)",
    ("asyncssh", "upload"): "await conn.run(COMMAND, stdin=open(LOCAL, 'rb'))",
    ("asyncssh", "tool download"): "async with conn.start_sftp_client() as sftp: await sftp.get(REMOTE, LOCAL, "
    "sparse=False{})",
    ("asyncssh", "tool upload"): "async with conn.start_sftp_client() as sftp: await sftp.put(LOCAL, REMOTE, "
    "sparse=False{})",
    ("libssh", "download"): "chan = session.new_channel(); chan.request_exec(COMMAND); chan.recv(65536) until EOF",
    ("libssh", "upload"): "chan = session.new_channel(); chan.request_exec(COMMAND); chan.write(data); "
    "chan.send_eof()",
    ("libssh", "tool download"): "session.sftp().get(REMOTE, LOCAL)",
    ("libssh", "tool upload"): "session.sftp().put(LOCAL, REMOTE)",
    ("libssh2", "download"): "chan = session.open_session(); chan.execute(COMMAND); chan.read(65536) until 0",
    ("libssh2", "upload"): "chan = session.open_session(); chan.execute(COMMAND); chan.write(data); chan.send_eof()",
    ("libssh2", "tool download"): "with session.sftp_init().open(REMOTE, LIBSSH2_FXF_READ, 0) as f: read each block",
    ("libssh2", "tool upload"): "with session.sftp_init().open(REMOTE, WRITE_FLAGS, 0o600) as f: f.write(each block)",
}
SFTP_TUNED = {"asyncssh": ", max_requests=128"}


def code_lines(sc: Scenario, group: str) -> list[str]:
    """Return the code a pick stands for: its connection (tuned where it was) and the call that did the job."""
    client, tuned = sc.client or "", sc.mode == "tuned"
    lines = [CONNECT[client].format(TUNED_CONNECT.get(client, "") if tuned else "")]
    work = WORK.get((client, group))
    if work:
        lines.append(work.format(SFTP_TUNED.get(client, "") if tuned else ""))
    if sc.cipher:
        lines.append(f"# measured with the cipher pinned to {sc.cipher}; the library's own choice may differ")
    return lines


def print_picks(console: Console, run: RunRecord, picks: Sequence[Pick]) -> None:
    """Print the library to use per job, each with its claim and its code lines."""
    if not picks:
        console.print("No library row was ranked (at least 3 samples): nothing to recommend.", highlight=False)
        return
    console.print("From a program, on this host (the fastest library measured, per job):", style="bold",
                  highlight=False)  # fmt: skip
    for p in picks:
        console.print(f"  {p.claim().text}", highlight=False, markup=False)
        for line in code_lines(p.row.scenario, p.group):
            console.print(f"      {line}", highlight=False, markup=False, style="cyan")
