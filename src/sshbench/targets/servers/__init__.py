"""Embedded servers: one module per server type plus the registry that names them, the shared life cycle (base:
private directory, keys, start, teardown, the wrap hook) and the private home of servers that read ~/.ssh."""
