"""What sshbench runs beside the ssh client, by kind: `servers/` (the embedded servers: one module per server type,
the registry that names them, their shared life cycle and private home), `link/` (the emulated link: its spec,
the network namespace and delay line that make it, the check that verifies it), `limits/` (what constrains a
side: CPU groups and quotas, pinning, emulated CPU features, and the crypto ceilings measured under them) and
`helpers/` (processes started beside the servers: the link check's socat pair, the plaintext baselines)."""
