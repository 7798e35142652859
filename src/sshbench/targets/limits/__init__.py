"""What constrains a side: CPU groups and quotas (cgroups), pinning, emulated CPU features (emulation), and what
OpenSSL alone can encrypt under those limits (ceilings)."""
