"""The real ssh client: spawning it (proc), reading what it prints (text), where it connects (destination),
what it and a server offer and negotiate (discover, audit: the only ssh-audit import), and the machine (envinfo)."""
