"""Library drivers: each is the plain program a user of that library would write (connect, verify the host key
against known_hosts, log in with a key, run one command with stdin and stdout wired through, or copy one file with
SFTP), run as `python -m sshbench.clients.drivers.NAME`. Only the standard library and the measured library are
imported; the lines for sshbench go to stderr (`common.say`)."""
