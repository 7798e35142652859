"""Allow `python -m sshbench`."""

from sshbench.cli.main import main

main()
