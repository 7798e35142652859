"""Shell completion: commands and options (click), algorithm names (`ssh -Q`), run ids (the database).

`sshbench completion bash|zsh|fish` prints the script to source; README says where to put it. The completers of
algorithm names and run ids live with the parameter types they complete (cli/params.py).
"""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class


@click.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@click.pass_context
def completion_cmd(ctx: click.Context, shell: str) -> None:
    """Print the shell completion script: commands, options, algorithm names and run ids.

    \b
    bash:  sshbench completion bash > ~/.local/share/bash-completion/completions/sshbench
    zsh:   sshbench completion zsh > "${fpath[1]}/_sshbench"
    fish:  sshbench completion fish > ~/.config/fish/completions/sshbench.fish
    """
    root = ctx.find_root().command  # the `sshbench` group, whichever module holds it
    cls = get_completion_class(shell)
    assert cls is not None
    click.echo(cls(root, {}, "sshbench", "_SSHBENCH_COMPLETE").source())
