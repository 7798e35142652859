"""The command line: main (the group and the one error boundary), common (session, consoles, progress, shared
options), one module per family of commands (measuring, stored), and options (parsing option values)."""
