"""Many machines: `fleet` measures the hosts of an Ansible inventory, an ssh_config pattern or a hosts file;
`import` brings back runs that other machines measured (contrib/ansible runs them there)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import click

from sshbench.cli.common import execute, open_store, out, resuming
from sshbench.cli.decorators import DIRECTIONS, algorithm_option, count_option, db_option, resume_option, ssh_option
from sshbench.cli.measuring import POLICY_HELP, build_options
from sshbench.cli.values import Given
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import DEFAULT_POLICY, FleetOptions

FLEET_HELP = """Measure many hosts: what each offers and negotiates, its connection time, optionally its throughput;
then a table per host, per inventory group, the outliers, and one configuration for all of them.

\b
Hosts come from one source:
  -i INVENTORY [--limit PATTERN]  an Ansible inventory (file, directory or
      script) through ansible-inventory; ansible_host, ansible_port,
      ansible_user, ansible_ssh_private_key_file, ansible_ssh_common_args
  --hosts 'web-*' [--ssh-config F]  your ssh_config's matching Host aliases
  --hosts-file FILE  destinations, one per line ([group] lines group them)

Per host, --forks at a time: its KEXINIT offer (no login), what the default and strict client
profiles negotiate, and the connection time (--rounds samples, with a 95% CI) for today's default
and for each key exchange the --policy allows. With --throughput, a few ciphers both ways with a
small --size, one host at a time. Host-key checking is your own: accept host keys with plain ssh
first. A host that cannot be reached, or refuses the login, is listed with its reason and the
others go on. Exit status: 0 when every host was measured, 4 when some were not, 2 for a bad
inventory. Each host's measurements are a run of its own (`sshbench show RUN`).

\b
Examples:
  sshbench fleet -i inventory.ini --limit web
  sshbench fleet --hosts 'web-*,db-*' --forks 10
  sshbench fleet -i prod/ --throughput --size 32M --policy post-quantum
"""


@click.command("fleet", help=FLEET_HELP)
@click.option("-i", "--inventory", metavar="INVENTORY", help="Ansible inventory: file, directory or script.")
@click.option("--limit", metavar="PATTERN", help="Ansible host pattern to narrow the inventory (as ansible --limit).")
@click.option("--hosts", "hosts_pattern", metavar="PATTERNS", help="ssh_config Host patterns, comma-separated.")
@click.option("--ssh-config", type=click.Path(exists=True, dir_okay=False), help="ssh_config file (ssh -F).")
@ssh_option
@click.option("--hosts-file", type=click.Path(exists=True, dir_okay=False), help="File of destinations.")
@count_option("--forks", FleetOptions.forks, 1, 200, "Hosts reached and timed at once (throughput: one at a time).")
@click.option("--throughput", is_flag=True, help="Also measure a few ciphers both ways (moves data: opt-in).")
@algorithm_option("kex", "Key exchanges to time [default: each the policy allows, and today's default].")
@algorithm_option("cipher", "Ciphers for --throughput [default: AES-GCM, chacha20-poly1305, aes128-ctr].")
@click.option("--size", default="16M", show_default=True, help="Bytes per transfer with --throughput.")
@click.option("--direction", type=click.Choice(list(DIRECTIONS)), default="both", show_default=True)
@count_option("--rounds", 5, 3, 100, "Samples per connection (and transfer) scenario.")
@count_option("--max-rounds", 10, 3, 1000, "Add rounds up to this many while the CI is wider than --ci.")
@click.option("--ci", default="10%", show_default=True, help="Target half-width of the median's 95% CI.")
@click.option("--policy", "policy_spec", default=DEFAULT_POLICY, show_default=True, help=POLICY_HELP)
@db_option
@resume_option
def fleet_cmd(**kw: Any) -> None:
    """Measure the hosts of an inventory (help: FLEET_HELP)."""
    from sshbench.analyse import policy
    from sshbench.runkinds import RunKind

    given = Given.from_click(kw)
    if resuming(given):
        return
    sources = [
        n
        for n, v in (
            ("inventory", given.inventory),
            ("hosts_pattern", given.hosts_pattern),
            ("hosts_file", given.hosts_file),
        )
        if v
    ]
    if len(sources) != 1:
        raise SshbenchError(
            "give one source of hosts" if not sources else "give only one source of hosts",
            place="sshbench fleet",
            fix="-i INVENTORY, --hosts PATTERNS (with --ssh-config FILE) or --hosts-file FILE",
            code=ExitCode.USAGE,
        )
    if given.limit and not given.inventory:
        raise SshbenchError(
            "--limit narrows an inventory", place="--limit", fix="add -i INVENTORY", code=ExitCode.USAGE
        )
    spec = given.policy_spec or DEFAULT_POLICY
    policy.resolve(spec)  # a bad level or policy file fails before any host is reached
    stored_policy = spec if spec in policy.LEVELS else str(Path(spec).resolve())
    given = dataclasses.replace(given, policy=stored_policy, warmup=1, max_time="none")
    opts = build_options(RunKind.FLEET, given, latency=True, throughput=given.throughput)
    opts = dataclasses.replace(
        opts,
        target="fleet",
        own=FleetOptions(
            inventory=given.inventory,
            limit=given.limit,
            hosts=given.hosts_pattern,
            hosts_file=str(Path(given.hosts_file).resolve()) if given.hosts_file else None,
            forks=given.forks,
        ),
        plan=dataclasses.replace(opts.plan, racing=False),  # each host's rows are its own checks: none is raced out
    )
    execute(opts, given.db, given.as_json)


@click.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--client", metavar="NAME", help="The machine that measured [default: the one the file names].")
@click.option(
    "--merge",
    is_flag=True,
    help="The files are `sshbench load --start-at` runs of several generator hosts against one target: make them "
    "one run, each step's logins pooled (its percentiles from the pooled logins, never averaged).",
)
@db_option
def import_cmd(files: tuple[Path, ...], client: str | None, merge: bool, db: Path | None, as_json: bool) -> None:
    """Add runs measured elsewhere (the JSON of `sshbench COMMAND --json`) to this database.

    contrib/ansible/sshbench-peers.yml runs sshbench on inventory hosts against their peers and
    fetches these files back. Each becomes a run of its own, with the machine that measured it
    recorded as the client; `history`, `show`, `compare` and `report` then read it like any run.

    With --merge, the runs of `sshbench load --start-at` on several hosts (the playbook's load
    mode) become one run whose steps hold every host's logins.

    \b
    Examples:
      sshbench import results/*.json
      sshbench import web1-db1.json --client web1
      sshbench import --merge results/*-to-bastion.json
    """
    import json

    from sshbench.jobs.importing import import_document, merge_documents, read_document

    documents = [read_document(path) for path in files]  # every file is decoded before any is stored
    if merge:
        merged = merge_documents(documents)
        run_id = import_document(open_store(db), merged, None)
        logins = sum(len(samples) for _, _, samples in merged.scenarios)
        said = {"files": [str(p) for p in files], "run": run_id, "clients": merged.environment.client_host}
        if as_json:
            click.echo(json.dumps({"merged": said | {"logins": logins}}, indent=2))
        else:
            out().print(
                f"merged {len(files)} files as run {run_id}: {merged.options.command} of {merged.target} from "
                f"{merged.environment.client_host} ({logins} logins, {merged.status})",
                highlight=False,
            )
        return
    store = open_store(db)
    done = []
    for path, document in zip(files, documents, strict=True):
        run_id = import_document(store, document, client)
        record = store.run(run_id)
        done.append({"file": str(path), "run": run_id, "client": record.environment.client_host})
        if not as_json:
            out().print(
                f"imported {path.name} as run {run_id}: {record.kind} of {record.target} measured from "
                f"{record.environment.client_host} ({record.status})",
                highlight=False,
            )
    if as_json:
        click.echo(json.dumps({"imported": done}, indent=2))


COMMANDS = (fleet_cmd, import_cmd)
