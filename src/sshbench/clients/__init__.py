"""SSH clients measured side by side (`sshbench clients`): one row per client in `registry.py`, the binaries run as
they are, each library through a small driver of its own in `drivers/`."""
