"""Embedded servers: one module per server type plus the registry that names them, the shared life cycle
(base: private directory, keys, start, teardown, the wrap hook), and what can be done to a server process:
a private home (namespace), CPU accounting (cgroups), CPU pinning and emulated CPU features (emulation)."""
