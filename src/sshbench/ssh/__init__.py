"""The real ssh client: spawning it (proc), reading what it prints (text), where it connects (destination),
what it and a server offer and negotiate (discover, audit: the only ssh-audit import), the machine (envinfo), a
remote scratch directory (scratch), and the hosts of a fleet (inventory: Ansible inventories, ssh_config aliases,
hosts files)."""
