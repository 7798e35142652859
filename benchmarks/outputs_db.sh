#!/bin/bash
# A database of real runs of every kind, to show that a restructure changes no output (issue 22):
#   benchmarks/outputs_db.sh DB     (as root: links, CPU limits and the pi preset need it; about 20 minutes)
# then benchmarks/outputs_snapshot.sh on it with the old and the new tree, and `diff -r` the two directories.
set -u
DB=$(realpath -m "${1:?usage: outputs_db.sh DB}")
cd "$(dirname "$0")/.."
SB=(.venv/bin/python -m sshbench)
log() { echo "== $(date +%T) $*" >&2; }
run() { log "$*"; "${SB[@]}" "$@" --db "$DB" > /dev/null; }
run run --max-time 60s
run algos
run latency --max-time 70s
run throughput --max-time 60s --macs each --cipher aes128-ctr,aes128-gcm@openssh.com,chacha20-poly1305@openssh.com
run sweep --max-time 100s
run servers --max-time 60s
run tools --max-time 80s
run throughput --max-time 60s --emulate no-aesni --pin --cipher aes128-gcm@openssh.com,chacha20-poly1305@openssh.com
run throughput --max-time 80s --link gbe --direction down --cipher aes128-gcm@openssh.com,chacha20-poly1305@openssh.com
run latency --max-time 60s --server-cpu 50 --kex curve25519-sha256,ecdh-sha2-nistp256
run throughput --max-time 100s --preset pi --direction up --cipher chacha20-poly1305@openssh.com,aes128-gcm@openssh.com
run tune --max-time 120s
run clients --max-time 150s --client openssh,dropbear,paramiko,asyncssh
log "remote host, fleets"; .venv/bin/python benchmarks/outputs_fleet.py "$DB"
log "interrupted"; "${SB[@]}" throughput --db "$DB" --max-time 60s > /dev/null 2>&1 & pid=$!
sleep 18; kill -TERM $pid; wait $pid
log done
