"""Terminal presentation of a `clients` run: each client's version and settings (or why it did not run), and the
library to use per job with the code it stands for (`recommend`)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape

from sshbench.analyse.claims.clients import SETTING_JOBS, Effect, Pick
from sshbench.model import SETTING_NAMES, Scenario
from sshbench.ratios import Word, interval_name
from sshbench.records import RunRecord
from sshbench.units import format_value


def print_clients(console: Console, run: RunRecord) -> None:
    """Print each client: what it is, its version, its default settings and the second setting measured (named for
    what it changes), or why it was skipped."""
    clients = run.environment.clients
    if not clients:
        return
    console.print(
        "Clients (default: as their users run them; then the one change measured, named):",
        style="bold",
        highlight=False,
    )
    for name, about in clients.items():
        if "skipped" in about:
            console.print(f"  {name}: [dim]not measured[/]: {escape(about['skipped'])}", highlight=False)
            continue
        start = about.get("start_s")
        started = f"; starts and loads in {format_value('ms', float(start))} ms" if start else ""
        console.print(f"  {name}: {escape(about.get('version', '?'))}{started}", highlight=False)
        console.print(f"    default: {escape(about.get('default', ''))}", highlight=False)
        if "kex_offered" in about or "kex_negotiated" in about:
            console.print(f"    key exchange: {escape(_kex_line(about))}", highlight=False)
        if "tuned" in about:
            named = SETTING_NAMES.get(name, "changed")
            console.print(f"    {escape(named)}: {escape(about['tuned'])}", highlight=False)
        if about.get("kind") == "binary" and name != "openssh":
            console.print(
                "    it says nothing when its command is sent: its CPU per GiB includes its login",
                highlight=False,
                style="dim",
            )


def _kex_line(about: dict[str, str]) -> str:
    """Return a client's key exchanges in words: what it offers first, how many it can be pinned to, what it gets."""
    offered = [k for k in about.get("kex_offered", "").split(",") if k]
    parts = [f"offers {offered[0]} first ({len(offered)} offered)"] if offered else []
    parts += [f"{about['kex_pinnable']} it can be pinned to"] if "kex_pinnable" in about else []
    parts += [f"negotiates {about['kex_negotiated']}"] if "kex_negotiated" in about else []
    return "; ".join(parts) or "not known"


TUNED_WINDOW = "64 * 2**20"  # the tuned drivers' values (clients/drivers/*; tests/render/test_clients.py checks)
TUNED_PACKET = "2**18"
CONNECT = {
    "paramiko": "client = paramiko.SSHClient(); client.load_system_host_keys(); client.connect(HOST, username=USER{})",
    "asyncssh": "conn = await asyncssh.connect(HOST, username=USER{})",
    "libssh": "session = Session(); session.connect(host=HOST, user=USER, private_key=open(KEY, 'rb').read())",
    "libssh2": "session = Session(); session.handshake(socket.create_connection((HOST, 22))); check "
    "session.hostkey() with session.knownhost_init() (readfile, checkp); "
    "session.userauth_publickey_fromfile(USER, KEY)",
    "gossh": 'hostKeys, err := knownhosts.New(KNOWN_HOSTS); client, err := ssh.Dial("tcp", ADDR, '
    "&ssh.ClientConfig{{User: USER, Auth: []ssh.AuthMethod{{ssh.PublicKeys(signer)}}, HostKeyCallback: hostKeys}})",
    "russh": "let mut handle = client::connect(Arc::new(client::Config {{ {}..Default::default() }}), (HOST, 22), "
    "handler).await?; handle.authenticate_publickey(USER, PrivateKeyWithHashAlg::new(Arc::new(key), None)).await?; "
    "// handler.check_server_key: check_known_hosts_path(HOST, 22, key, KNOWN_HOSTS)",
}
TUNED_CONNECT = {
    "paramiko": ", transport_factory=lambda sock, **kw: paramiko.Transport(sock, default_window_size="
    f"{TUNED_WINDOW}, default_max_packet_size={TUNED_PACKET}, **kw)",
    "asyncssh": f", window={TUNED_WINDOW}, max_pktsize={TUNED_PACKET}",
    "russh": "nodelay: true, window_size: 64 << 20, maximum_packet_size: 65535, ",
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
    ("libssh", "upload"): "chan = session.new_channel(); chan.request_exec(COMMAND); chan.write(data); chan.send_eof()",
    ("libssh", "tool download"): "session.sftp().get(REMOTE, LOCAL)",
    ("libssh", "tool upload"): "session.sftp().put(LOCAL, REMOTE)",
    ("libssh2", "download"): "chan = session.open_session(); chan.execute(COMMAND); chan.read(65536) until 0",
    ("libssh2", "upload"): "chan = session.open_session(); chan.execute(COMMAND); chan.write(data); chan.send_eof()",
    ("libssh2", "tool download"): "with session.sftp_init().open(REMOTE, LIBSSH2_FXF_READ, 0) as f: read each block",
    ("libssh2", "tool upload"): "with session.sftp_init().open(REMOTE, WRITE_FLAGS, 0o600) as f: f.write(each block)",
    ("gossh", "download"): "session, err := client.NewSession(); session.Stdout = out; err = session.Run(COMMAND)",
    ("gossh", "upload"): "session, err := client.NewSession(); session.Stdin = in; err = session.Run(COMMAND)",
    ("gossh", "tool download"): "sc, err := sftp.NewClient(client{}); f, err := sc.Open(REMOTE); f.WriteTo(local)",
    ("gossh", "tool upload"): "sc, err := sftp.NewClient(client{}); f, err := sc.OpenFile(REMOTE, "
    "os.O_WRONLY|os.O_CREATE|os.O_TRUNC); f.ReadFrom(local)",
    ("russh", "download"): "let mut channel = handle.channel_open_session().await?; channel.exec(true, COMMAND)"
    ".await?; while let Some(msg) = channel.wait().await {{ if let ChannelMsg::Data {{ data }} = msg "
    "{{ out.write_all(&data)?; }} }}",
    ("russh", "upload"): "let channel = handle.channel_open_session().await?; channel.exec(true, COMMAND).await?; "
    "let (mut read, write) = channel.split(); tokio::spawn(async move {{ write.data(input).await?; write.eof().await "
    "}}); while read.wait().await.is_some() {{}} // read while sending: window adjustments queue with the output",
    ("russh", "tool download"): "let sftp = SftpSession::new(channel.into_stream()).await?; "
    "tokio::io::copy(&mut sftp.open(REMOTE).await?, &mut local).await?",
    ("russh", "tool upload"): "let sftp = SftpSession::new(channel.into_stream()).await?; let mut f = "
    "sftp.create(REMOTE).await?; tokio::io::copy(&mut local, &mut f).await?; f.shutdown().await?",
}
SFTP_TUNED = {"asyncssh": ", max_requests=128", "gossh": ", sftp.UseConcurrentWrites(true)"}
RUSSH_SFTP = "let sftp = SftpSession::new_with_config(channel.into_stream(), Config {{ max_concurrent_writes: 64, "
TUNED_WORK = {  # (client, job) -> the code of the tuned setting, where it is not the default's with one change
    ("russh", "tool download"): RUSSH_SFTP + "..Default::default() }}).await?; tokio::io::copy_buf(&mut "
    "BufReader::with_capacity(256 << 10, sftp.open(REMOTE).await?), &mut local).await?",
    ("russh", "tool upload"): RUSSH_SFTP + "..Default::default() }}).await?; let mut f = sftp.create(REMOTE).await?; "
    "tokio::io::copy_buf(&mut BufReader::with_capacity(256 << 10, local), &mut f).await?; f.shutdown().await?",
}


def code_lines(sc: Scenario, group: str) -> list[str]:
    """Return the code a pick stands for: its connection (tuned where it was) and the call that did the job."""
    client, tuned = sc.client or "", sc.mode == "tuned"
    lines = [CONNECT[client].format(TUNED_CONNECT.get(client, "") if tuned else "")]
    work = (TUNED_WORK.get((client, group)) if tuned else None) or WORK.get((client, group))
    if work:
        lines.append(work.format(SFTP_TUNED.get(client, "") if tuned else ""))
    if sc.cipher:
        lines.append(f"# measured with the cipher pinned to {sc.cipher}; the library's own choice may differ")
    return lines


def _effect(e: Effect) -> str:
    """Return one job's change by a setting, with its interval and verdict."""
    job = SETTING_JOBS.get(e.group, e.group)
    v = e.verdict
    if v is None:
        return f"{job}: too few rounds paired with its default"
    low, high = (v.ratio.low - 1) * 100, (v.ratio.high - 1) * 100
    word = "slower: it hurts here" if v.word is Word.SLOWER else v.word.value
    return f"{job} {(v.ratio.value - 1) * 100:+.0f} % ({interval_name(v.ratio)} {low:+.0f} .. {high:+.0f} %, {word})"


def print_effects(console: Console, run: RunRecord, effects: Sequence[Effect]) -> None:
    """Print what each client's second setting did to each job against its defaults, and why where it hurts."""
    if not effects:
        return
    console.print(
        "What each change did against the same client's defaults (ratio of rates or times, paired per round):",
        style="bold",
        highlight=False,
    )
    for client in dict.fromkeys(e.client for e in effects):
        mine = [e for e in effects if e.client == client]
        named = SETTING_NAMES.get(client, "its change")
        console.print(f"  {client} ({named}): {'; '.join(_effect(e) for e in mine)}", highlight=False, markup=False)
        why = run.environment.clients.get(client, {}).get("hurts")
        if why and any(e.hurts for e in mine):
            console.print(f"    why: {why}", highlight=False, markup=False)


def print_picks(console: Console, run: RunRecord, picks: Sequence[Pick], language: str) -> None:
    """Print the library to use per job from a program in one language, each with its claim and its code lines."""
    if not picks:
        libs = {n: a for n, a in run.environment.clients.items() if a.get("language", "Python") == language}
        skipped = [f"{n}: {a['skipped']}" for n, a in libs.items() if "skipped" in a]
        why = (
            "no library was in this run"
            if not libs
            else f"no {language} library ran here ({'; '.join(skipped)})"
            if len(skipped) == len(libs)
            else f"no {language} library row was ranked (at least 3 samples)"
        )
        console.print(f"Nothing to recommend for {language}: {why}.", highlight=False, markup=False)
        return
    console.print(
        f"From a {language} program, on this host (the fastest {language} library measured, per job):",
        style="bold",
        highlight=False,
    )
    for p in picks:
        console.print(f"  {p.claim().text}", highlight=False, markup=False)
        for line in code_lines(p.row.scenario, p.group):
            console.print(f"      {line}", highlight=False, markup=False, style="cyan")
