#!/bin/bash
# Save every read command's output on a database of runs (benchmarks/outputs_db.sh) into OUT:
#   benchmarks/outputs_snapshot.sh DB OUT [SRC]      (SRC: the src/ of the tree to run; default this one's)
# tables at 80 and 200 columns with stderr and exit status, --json, exports, reports (generation time replaced),
# compare, every --help and the completion script. Run it with the old and the new tree from the same path, then
# `diff -r OLD NEW`: a behaviour-neutral change leaves no difference.
set -u
DB=$(realpath "${1:?usage: outputs_snapshot.sh DB OUT [SRC]}"); OUT=$(realpath -m "${2:?}")
SRC=$(realpath "${3:-$(dirname "$0")/../src}"); PY="$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/python"  # not realpath: a venv's python is a link
rm -rf "$OUT"; mkdir -p "$OUT"; cd "$OUT"
cp "$DB" db.sqlite; D=(--db "$OUT/db.sqlite")
sb() { PYTHONPATH="$SRC" "$PY" -m sshbench "$@"; }
both() { local name=$1; shift; for w in 80 200; do COLUMNS=$w sb "$@" > "$name.$w.out" 2> "$name.$w.err"; echo "rc=$?" >> "$name.$w.err"; done; }
one() { local name=$1; shift; sb "$@" > "$name.out" 2>&1; echo "rc=$?" >> "$name.out"; }
ids=$("$PY" -c "import sqlite3,sys; print(*[r[0] for r in sqlite3.connect(sys.argv[1]).execute('SELECT id FROM runs ORDER BY id')])" db.sqlite)
both history history "${D[@]}"; both history-json history "${D[@]}" --json
both history-hosts history "${D[@]}" --hosts; both history-wide history "${D[@]}" --wide
prev=""
for i in $ids; do
  both show-$i show $i "${D[@]}"; both showw-$i show $i "${D[@]}" --wide; both showj-$i show $i "${D[@]}" --json
  both showm-$i show $i "${D[@]}" --margin 10%
  both rec-$i recommend $i "${D[@]}"; both recj-$i recommend $i "${D[@]}" --json
  for f in csv json hyperfine; do one exp-$i.$f export $i "${D[@]}" --format $f -o exp-$i.$f; done
  one exp-$i.shell export $i "${D[@]}" --format shell-csv -o exp-$i-shell
  one rep-$i report $i "${D[@]}" -o rep-$i.html; one repsvg-$i report $i "${D[@]}" --format svg -o rep-$i.svg
  if [ -n "$prev" ]; then both cmp-$prev-$i compare $prev $i "${D[@]}"; both cmpj-$prev-$i compare $prev $i "${D[@]}" --json; fi
  prev=$i
done
one rep-all report "${D[@]}" -o rep-all.html
both cmp-pool compare 1,3 2,4 "${D[@]}"; both cmp-fail compare 1 last "${D[@]}" --fail-if slower:5%
for c in "" run algos latency throughput sweep servers tools tune clients interop load fleet history show export report compare recommend import completion; do
  both help-${c:-root} $c --help
done
sb completion bash > completion.bash
sed -i -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} UTC/GENERATED/g' rep-*.html
grep -rlI "$OUT" . | xargs -r sed -i "s#$OUT#OUT#g"  # the database's path, in hints and "Stored as" lines
rm -f db.sqlite db.sqlite-shm db.sqlite-wal
echo "$(ls | wc -l) files in $OUT"
