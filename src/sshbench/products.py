"""SSH server products and what sshbench needs to know of each: one row per product, read wherever a server's
capabilities matter (planning, bounds and their remedies, emulation, load limits), for embedded servers and for hosts
of yours recognised by their banner alike.

A row says whose code encrypts (OpenSSL, or the product's own: emulating a CPU without AES instructions and
`openssl speed` ceilings then say nothing of it), its SSH channel receive window and the option that sets it (None:
fixed), what serves SFTP (None: it has none), and how many connections from one address it lets log in at once where
that is below OpenSSH's MaxStartups (Dropbear's MAX_UNAUTH_PER_IP). Adding a server product is one row.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Product:
    """One SSH server product's capabilities."""

    name: str  # as shown: OpenSSH, Dropbear, TinySSH
    banner: str  # the word its SSH banner carries, lower case
    own_crypto: bool  # encrypts with its own code, not OpenSSL
    window: int | None  # its SSH channel receive window in bytes, by default (bounds uploads)
    window_option: str | None  # the command-line option that sets the window (None: fixed)
    sftp: str | None  # what serves SFTP on an embedded server of it (None: it has no SFTP server)
    logins_per_address: int | None = None  # connections from one address it lets log in at once (None: no limit known)
    closers: str = ""  # what in it can close a new connection before its banner (for a cause seen by a client only)
    options: bool = False  # an embedded server of it takes sshd_config settings (`KEY=VALUE`: --server-option)
    processes: tuple[str, ...] = ()  # the names its server's processes run as (the kernel's comm)
    files_per_session: int = 1  # open files a held session costs its busiest process (1: the driver's socket)
    files_why: str = "the driver holds a socket each"  # what holds them, in words
    ignore_fault: str = ""  # what it does with a channel open right behind an SSH_MSG_IGNORE ("": answers it)


OPENSSH = Product(  # its window: CHAN_SES_WINDOW_DEFAULT
    name="OpenSSH",
    banner="openssh",
    own_crypto=False,
    window=2 * 2**20,
    window_option=None,
    sftp="sshd's internal-sftp",
    closers="MaxStartups (unauthenticated connections past start:rate:full) or PerSourcePenalties (9.8 and later)",
    options=True,
    processes=("sshd", "sshd-session", "sshd-auth"),
)
DROPBEAR = Product(
    name="Dropbear",
    banner="dropbear",
    own_crypto=True,
    window=24576,
    window_option="-W",
    sftp="dropbear server's SFTP subsystem",
    logins_per_address=5,
    closers="its compiled-in limits: 5 unauthenticated connections per address, 30 in all",
    processes=("dropbear",),
)
TINYSSH = Product(  # its window is fixed in TinySSH (no option)
    name="TinySSH",
    banner="tinyssh",
    own_crypto=True,
    window=128 * 2**10,
    window_option=None,
    sftp=None,
    closers="tcpserver's limit of connections at once (-c, 40)",
    processes=("tinysshd",),  # tcpserver holds none of its connections: a process each
    # measured (2026-11-28, tinysshd 20230101, asyncssh 2.24.1): with asyncssh's IGNORE dropped, 0 of 40 logins hung;
    # with it, 2-19 of 20; tinysshd -vvv logs the key accepted, then nothing until the client gives up
    ignore_fault="TinySSH (20230101) at times leaves a session's channel open unanswered when an SSH_MSG_IGNORE "
    "comes right before it, which RFC 4253 lets a client send at any time (and the server must ignore)",
)
# golang.org/x/crypto/ssh: channelWindowSize = 64 * 32 KiB, fixed (no option); Go's own crypto. Its default banner
# is `SSH-2.0-Go`, which Gitea and others keep.
GOSSH = Product(
    name="Go x/crypto/ssh",
    banner="ssh-2.0-go",
    own_crypto=True,
    window=2 * 2**20,
    window_option=None,
    sftp="github.com/pkg/sftp in the Go server",
    closers="no limit of its own (the listen backlog can)",
    processes=("sshbench-gosshd",),
    files_per_session=4,
    files_why="the Go server holds a socket and three pipes per session",
)
PRODUCTS = (OPENSSH, DROPBEAR, TINYSSH, GOSSH)
_BY_NAME = {p.name: p for p in PRODUCTS}


def process_names() -> frozenset[str]:
    """Return the names every known server product's processes run as."""
    return frozenset(n for p in PRODUCTS for n in p.processes)


def by_name(name: str) -> Product | None:
    """Return the row of a product by its name as shown (OpenSSH, Dropbear, TinySSH), or None."""
    return _BY_NAME.get(name)


def from_banner(banner: str) -> Product | None:
    """Return the product a server's SSH banner names, or None for one this table lacks."""
    low = banner.lower()
    return next((p for p in PRODUCTS if p.banner in low), None)


def own_crypto() -> str:
    """Return the products that encrypt with their own code, as words (`Dropbear, TinySSH and Go x/crypto/ssh`)."""
    names = [p.name for p in PRODUCTS if p.own_crypto]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def named_in(text: str) -> Product | None:
    """Return the product a banner or an embedded server's description (`embedded gossh server ...`) names."""
    return from_banner(text) or (GOSSH if "gossh" in text.lower() else None)


# A server's processes by role (measure/exits.py tells them apart, analyse/load.py reads them per login)
LISTENER, CONNECTION, PRE_AUTH, POST_AUTH, COMMAND = "listener", "connection", "pre-auth", "post-auth", "command"
ROLES = {
    LISTENER: "the process that accepts connections (the Go server serves every connection inside it)",
    CONNECTION: "the listener's child per connection (OpenSSH's monitor, which before 10.0 serves a root login's "
    "session itself; Dropbear's and TinySSH's process per connection, with the server processes it forks)",
    PRE_AUTH: "OpenSSH's privilege-separated child before authentication (sshd-auth from 10.0)",
    POST_AUTH: "OpenSSH's child after authentication, which runs the command (before 10.0: not for root logins)",
    COMMAND: "the login's shell and command",
}
LOST = "lost"  # a role phase saying the kernel's records came faster than they were read: the step's roles unread
ROLE_PHASE = "role_"  # a login's phase: its step's server CPU seconds so far in one role (role_pre-auth)
