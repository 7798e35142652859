"""Processes started beside the embedded servers, inside the link's namespace when there is one: starting,
waiting for and stopping them (processes), and the plaintext baselines of `tools` (plain)."""
