"""The clients `sshbench clients` compares: one row each. A row names the client, how to find it (a binary, or a
library's driver module under `drivers/`), what installs it, and its two settings: as its users run it, and tuned
with the knobs its maintainers document (each named, so the output can say what was changed)."""

from __future__ import annotations

from dataclasses import dataclass

from sshbench.errors import ExitCode, SshbenchError

DRIVERS = "sshbench.clients.drivers"
TUNED_WINDOW = "64 * 2**20"  # the tuned drivers' values (clients/drivers/*; tests/render/test_client_picks.py checks)
TUNED_PACKET = "2**18"


@dataclass(frozen=True)
class Code:
    """The code a library's pick stands for in `recommend`: its connection (`{}` takes the tuned setting's
    arguments) and the call that did each job (`{}` takes the tuned SFTP arguments)."""

    connect: str
    work: tuple[tuple[str, str], ...]  # (job, code): download, upload, tool download, tool upload
    tuned_connect: str = ""  # the arguments the tuned setting adds to the connection
    tuned_work: tuple[tuple[str, str], ...] = ()  # (job, code) where the tuned setting's code is not the default's
    sftp_tuned: str = ""  # the arguments the tuned setting adds to SFTP calls


@dataclass(frozen=True)
class ClientType:
    """One client sshbench can drive."""

    name: str  # as given to --client
    product: str  # what its users call it
    binary: str | None  # a client binary run as it is (ssh, dbclient); None: a library, run by its driver
    package: str  # the Debian package of a binary, the pip package of a Python library, or a toolchain (go, cargo)
    default: str  # its settings as its users run it
    tuned: str | None = None  # the settings its maintainers' knobs allow, each named (None: nothing to tune)
    sftp: bool = True  # copies files with SFTP
    language: str = "Python"  # a library's: its driver is a Python module, or a Go or Rust program sshbench builds
    tuned_jobs: frozenset[str] = frozenset(("exec", "get", "put"))  # the jobs its tuned settings change (or connect)
    hurts: str | None = None  # why its second setting can make a job slower, where that is known (printed then)
    setting: str | None = None  # its second setting in a few words, as a row's label names it (`64 MiB window`)
    code: Code | None = None  # a library's code lines for `recommend`
    marks: bool = False  # a binary that says when its command is sent (ssh): its CPU per GiB excludes its login
    # OpenSSH's ssh itself: `--ssh` gives its path, `ssh -V`/`-Q` tell its version and lists, and it reaches any
    # endpoint as sshbench's own connections do (its config and known_hosts), so no other reach is looked for
    ssh_itself: bool = False
    sends_ignore: str = ""  # when it sends an SSH_MSG_IGNORE before a channel open, in words ("": it does not)
    # one login outside sshbench against the same server, for an interop failure ({ssh}: the client given, {pins}: -o
    # options of the kex and host key; PORT, KEY and FILE are the server's); None: its driver's `connect 1`
    by_hand: str | None = None

    def modes(self, job: str) -> tuple[str | None, ...]:
        """Return the settings a job is measured with: the default, and tuned where the tuning changes it."""
        return (None, "tuned") if self.tuned and job in self.tuned_jobs else (None,)

    @property
    def driver(self) -> str | None:
        """Return a Python library's driver module (run with `python -m`); None for a binary or a Go or Rust library."""
        return None if self.binary or self.language != "Python" else f"{DRIVERS}.{self.name}_driver"

    @property
    def library(self) -> bool:
        """Return True for a library (its connections are also timed inside one live process)."""
        return self.binary is None


CLIENT_TYPES = (
    ClientType(
        name="openssh",
        product="OpenSSH ssh and sftp",
        binary="ssh",
        package="openssh-client",
        default="ssh -T with the options of every sshbench transfer (no compression, no multiplexing)",
        marks=True,
        ssh_itself=True,
        by_hand="{ssh} {pins}-i KEY -o UserKnownHostsFile=FILE -p PORT 127.0.0.1 true",
    ),
    ClientType(
        name="dropbear",
        product="Dropbear dbclient",
        binary="dbclient",
        package="dropbear-bin",
        default="dbclient -T (receive window -W 24576)",
        tuned="dbclient -W 2097152 (its help: a larger receive window may be faster)",
        sftp=False,
        setting="-W 2 MiB",
        by_hand="dbclient -T -i KEY -p PORT 127.0.0.1 true",
    ),
    ClientType(
        name="paramiko",
        product="paramiko (Fabric, Ansible's paramiko connection)",
        binary=None,
        package="paramiko",
        default="SSHClient; window_size 2 MiB, max_packet_size 32 KiB; exec output read 64 KiB per Channel.recv (each "
        "read moves what is left of its buffer: stdout.read()'s 8 KiB reads are slower, 1 MiB reads faster, "
        "docs/BENCHMARKS.md); SFTP get prefetches, put is pipelined",
        tuned="Transport(default_window_size=64 MiB, default_max_packet_size=256 KiB), for every channel and SFTP",
        hurts="paramiko's Channel.recv takes each read off the front of a buffer that holds everything "
        "received and not yet read, up to the window: with 64 MiB in flight each 64 KiB read copies up to "
        "64 MiB once the reader falls behind, and SFTP get reads the same way (reading 4 MiB at a time "
        "avoids it: docs/BENCHMARKS.md, paramiko's window)",
        setting="64 MiB window",
        code=Code(
            connect=(
                "client = paramiko.SSHClient(); client.load_system_host_keys(); client.connect(HOST, username=USER{})"
            ),
            tuned_connect=(
                ", transport_factory=lambda sock, **kw: paramiko.Transport(sock, default_window_size="
                f"{TUNED_WINDOW}, default_max_packet_size={TUNED_PACKET}, **kw)"
            ),
            work=(
                (
                    "download",
                    (
                        "chan = client.get_transport().open_session(); chan.exec_command(COMMAND); while data := "
                        "chan.recv(65536): out.write(data)"
                    ),
                ),
                (
                    "upload",
                    (
                        "chan = client.get_transport().open_session(); chan.exec_command(COMMAND); chan.sendall(data); "
                        "chan.shutdown_write()"
                    ),
                ),
                ("tool download", "client.open_sftp().get(REMOTE, LOCAL)"),
                ("tool upload", "client.open_sftp().put(LOCAL, REMOTE)"),
            ),
        ),
    ),
    ClientType(
        name="asyncssh",
        product="asyncssh",
        binary=None,
        sends_ignore="asyncssh sends one before every packet once encrypted (connection.py, send_packet)",
        package="asyncssh",
        default="asyncssh.connect, conn.run(stdin=, stdout=); window 2 MiB, max_pktsize 32 KiB; SFTP block_size from "
        "the server's limits, max_requests 4 MiB / block_size (at least 16)",
        tuned="connect(window=64 MiB, max_pktsize=256 KiB); SFTP get/put(max_requests=128)",
        setting="64 MiB window, 128 requests",
        code=Code(
            connect="conn = await asyncssh.connect(HOST, username=USER{})",
            tuned_connect=f", window={TUNED_WINDOW}, max_pktsize={TUNED_PACKET}",
            work=(
                ("download", "await conn.run(COMMAND, stdout=out)"),
                ("upload", "await conn.run(COMMAND, stdin=open(LOCAL, 'rb'))"),
                (
                    "tool download",
                    "async with conn.start_sftp_client() as sftp: await sftp.get(REMOTE, LOCAL, sparse=False{})",
                ),
                (
                    "tool upload",
                    "async with conn.start_sftp_client() as sftp: await sftp.put(LOCAL, REMOTE, sparse=False{})",
                ),
            ),
            sftp_tuned=", max_requests=128",
        ),
    ),
    ClientType(
        name="libssh",
        product="libssh via ansible-pylibssh (Ansible's libssh connection)",
        binary=None,
        package="ansible-pylibssh",
        default="Session.connect; libssh's own cipher (the binding cannot choose one), 1 KiB reads",
        code=Code(
            connect="session = Session(); session.connect(host=HOST, user=USER, private_key=open(KEY, 'rb').read())",
            work=(
                ("download", "chan = session.new_channel(); chan.request_exec(COMMAND); chan.recv(65536) until EOF"),
                (
                    "upload",
                    "chan = session.new_channel(); chan.request_exec(COMMAND); chan.write(data); chan.send_eof()",
                ),
                ("tool download", "session.sftp().get(REMOTE, LOCAL)"),
                ("tool upload", "session.sftp().put(LOCAL, REMOTE)"),
            ),
        ),
    ),
    ClientType(
        name="libssh2",
        product="libssh2 via ssh2-python (parallel-ssh)",
        binary=None,
        package="ssh2-python",
        default="blocking Session; channel read/write of 64 KiB; SFTP one request at a time",
        code=Code(
            connect=(
                "session = Session(); session.handshake(socket.create_connection((HOST, 22))); check "
                "session.hostkey() with session.knownhost_init() (readfile, checkp); "
                "session.userauth_publickey_fromfile(USER, KEY)"
            ),
            work=(
                ("download", "chan = session.open_session(); chan.execute(COMMAND); chan.read(65536) until 0"),
                ("upload", "chan = session.open_session(); chan.execute(COMMAND); chan.write(data); chan.send_eof()"),
                ("tool download", "with session.sftp_init().open(REMOTE, LIBSSH2_FXF_READ, 0) as f: read each block"),
                ("tool upload", "with session.sftp_init().open(REMOTE, WRITE_FLAGS, 0o600) as f: f.write(each block)"),
            ),
        ),
    ),
    ClientType(
        name="gossh",
        product="Go golang.org/x/crypto/ssh, SFTP by github.com/pkg/sftp",
        binary=None,
        package="go",
        default="ssh.Dial, session.Run with Stdin/Stdout; channel window 2 MiB (x/crypto/ssh has no setting for it); "
        "pkg/sftp: 64 requests of 32 KiB in flight, concurrent reads, one write at a time",
        tuned="sftp.NewClient(conn, sftp.UseConcurrentWrites(true)): puts pipelined as its gets are (only puts are "
        "measured tuned: nothing else changes)",
        language="Go",
        tuned_jobs=frozenset(("put",)),
        setting="concurrent writes",
        code=Code(
            connect=(
                'hostKeys, err := knownhosts.New(KNOWN_HOSTS); client, err := ssh.Dial("tcp", ADDR, '
                "&ssh.ClientConfig{{User: USER, Auth: []ssh.AuthMethod{{ssh.PublicKeys(signer)}}, "
                "HostKeyCallback: hostKeys}})"
            ),
            work=(
                ("download", "session, err := client.NewSession(); session.Stdout = out; err = session.Run(COMMAND)"),
                ("upload", "session, err := client.NewSession(); session.Stdin = in; err = session.Run(COMMAND)"),
                ("tool download", "sc, err := sftp.NewClient(client{}); f, err := sc.Open(REMOTE); f.WriteTo(local)"),
                (
                    "tool upload",
                    (
                        "sc, err := sftp.NewClient(client{}); f, err := sc.OpenFile(REMOTE, "
                        "os.O_WRONLY|os.O_CREATE|os.O_TRUNC); f.ReadFrom(local)"
                    ),
                ),
            ),
            sftp_tuned=", sftp.UseConcurrentWrites(true)",
        ),
        by_hand="the gossh driver (~/.cache/sshbench/drivers/gossh-*/) with the same options and `connect 1`",
    ),
    ClientType(
        name="russh",
        product="russh (Rust), SFTP by russh-sftp",
        binary=None,
        package="cargo",
        default="client::connect, channel exec/data/wait; window_size 2 MiB, maximum_packet_size 32 KiB; russh-sftp "
        "File through tokio::io::copy (8 KiB reads, one request at a time; 8 writes in flight)",
        tuned="client::Config{nodelay: true, window_size: 64 MiB, maximum_packet_size: 65535} (its default leaves "
        "Nagle's algorithm on); russh-sftp Config{max_concurrent_writes: 64}, copies through a 256 KiB "
        "BufReader (requests of up to 256 KiB)",
        language="Rust",
        tuned_jobs=frozenset(("connect", "exec", "get", "put")),
        setting="nodelay, 64 MiB window",
        code=Code(
            connect=(
                "let mut handle = client::connect(Arc::new(client::Config {{ {}..Default::default() }}), (HOST, "
                "22), handler).await?; handle.authenticate_publickey(USER, "
                "PrivateKeyWithHashAlg::new(Arc::new(key), None)).await?; // handler.check_server_key: "
                "check_known_hosts_path(HOST, 22, key, KNOWN_HOSTS)"
            ),
            tuned_connect="nodelay: true, window_size: 64 << 20, maximum_packet_size: 65535, ",
            work=(
                (
                    "download",
                    (
                        "let mut channel = handle.channel_open_session().await?; channel.exec(true, COMMAND).await?; "
                        "while let Some(msg) = channel.wait().await {{ if let ChannelMsg::Data {{ data }} = msg {{ "
                        "out.write_all(&data)?; }} }}"
                    ),
                ),
                (
                    "upload",
                    (
                        "let channel = handle.channel_open_session().await?; channel.exec(true, COMMAND).await?; let "
                        "(mut read, write) = channel.split(); tokio::spawn(async move {{ write.data(input).await?; "
                        "write.eof().await }}); while read.wait().await.is_some() {{}} // read while sending: window "
                        "adjustments queue with the output"
                    ),
                ),
                (
                    "tool download",
                    (
                        "let sftp = SftpSession::new(channel.into_stream()).await?; tokio::io::copy(&mut "
                        "sftp.open(REMOTE).await?, &mut local).await?"
                    ),
                ),
                (
                    "tool upload",
                    (
                        "let sftp = SftpSession::new(channel.into_stream()).await?; let mut f = "
                        "sftp.create(REMOTE).await?; tokio::io::copy(&mut local, &mut f).await?; f.shutdown().await?"
                    ),
                ),
            ),
            tuned_work=(
                (
                    "tool download",
                    (
                        "let sftp = SftpSession::new_with_config(channel.into_stream(), Config {{ "
                        "max_concurrent_writes: 64, ..Default::default() }}).await?; tokio::io::copy_buf(&mut "
                        "BufReader::with_capacity(256 << 10, sftp.open(REMOTE).await?), &mut local).await?"
                    ),
                ),
                (
                    "tool upload",
                    (
                        "let sftp = SftpSession::new_with_config(channel.into_stream(), Config {{ "
                        "max_concurrent_writes: 64, ..Default::default() }}).await?; let mut f = "
                        "sftp.create(REMOTE).await?; tokio::io::copy_buf(&mut BufReader::with_capacity(256 << 10, "
                        "local), &mut f).await?; f.shutdown().await?"
                    ),
                ),
            ),
        ),
        by_hand="the russh driver (~/.cache/sshbench/drivers/russh-*/) with the same options and `connect 1`",
    ),
)
NAMES = tuple(c.name for c in CLIENT_TYPES)


def client_type(name: str) -> ClientType:
    """Return the registry row of a client."""
    return next(c for c in CLIENT_TYPES if c.name == name)


def known(name: str) -> ClientType | None:
    """Return a client's row, or None for a name no row has (a run stored by another version)."""
    return next((c for c in CLIENT_TYPES if c.name == name), None)


def parse_clients(text: str) -> tuple[str, ...]:
    """Parse --client openssh,paramiko (or `all`); fail naming the choices."""
    chosen = NAMES if text.strip() == "all" else tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
    unknown = [c for c in chosen if c not in NAMES]
    if unknown or not chosen:
        raise SshbenchError(
            f"unknown client {', '.join(unknown) or repr(text)}",
            place="--client",
            fix=f"choose from {','.join(NAMES)} (or all)",
            code=ExitCode.USAGE,
        )
    return chosen
