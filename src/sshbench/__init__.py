"""sshbench: measure SSH ciphers, MACs, key exchanges and servers on this hardware and this link."""

__version__ = "0.1.0"
