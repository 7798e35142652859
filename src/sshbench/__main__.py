"""Allow `python -m sshbench`."""

from sshbench.cli import main

main()
