#!/usr/bin/env bash
# bench/init.sh: loki-init side by side with tini, dumb-init, catatonit, the
# Python reference init and a bare `unshare --pid --fork`, on the same peer
# commands: start-to-exit of /bin/true, 2 GiB of stdout read by dd (free,
# the whole pipeline on CPU 0, only the peer and the init on CPU 0, and
# those two on CPU 0 with dd on CPU 1; with the CPU time the peer and the
# init spent per GiB),
# idle CPU / context switches / threads / RSS of the init, and reaping of
# 2,000 orphans. Prints one table with ratios against tini.
# Needs root (PID namespaces). Sizes are configurable so a run stays short:
#   INIT_BENCH_RUNS=20 INIT_BENCH_BYTES=2147483648 INIT_BENCH_IDLE=10s
#   INIT_BENCH_ORPHANS=2000 INIT_BENCH_ONLY=tini,loki-init INIT_BENCH_STREAMS=5
#   INIT_BENCH_PLACEMENTS=free,cpu0,init-cpu0,split
# INIT_BENCH_BASELINE=/path/to/older/loki-init adds a "loki-base" column
# measured in the same run (before/after comparisons on a shared machine).
# The "splice-hop" column (throughput rows only) is bench/splicehop, a
# plain splice forwarder: the cost of the extra pipe hop loki-init's
# contract requires, without loki-init's work to reduce it.
# Figures depend heavily on machine load: compare columns of one run only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin=${LOKI_BIN_DIR:-$root/bin}
if [ "$(id -u)" != 0 ]; then
	echo "bench/init.sh: needs root for PID namespaces; skipped" >&2
	exit 0
fi
if [ ! -x "$bin/loki-init" ]; then
	echo "bench/init.sh: $bin/loki-init missing (run make build)" >&2
	exit 1
fi
reference=$root/../shared/seeds/kranz_pid1.py
if [ ! -f "$reference" ]; then
	echo "bench/init.sh: reference $reference absent; its column is skipped" >&2
	reference=
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/initbench" ./bench/initbench && go build -o "$tmp/splicehop" ./bench/splicehop)
"$tmp/initbench" \
	-loki-init "$bin/loki-init" \
	-reference "$reference" \
	-runs "${INIT_BENCH_RUNS:-20}" \
	-bytes "${INIT_BENCH_BYTES:-2147483648}" \
	-idle "${INIT_BENCH_IDLE:-10s}" \
	-orphans "${INIT_BENCH_ORPHANS:-2000}" \
	-streams "${INIT_BENCH_STREAMS:-5}" \
	-placements "${INIT_BENCH_PLACEMENTS:-free,cpu0,init-cpu0,split}" \
	-only "${INIT_BENCH_ONLY:-}" \
	-baseline "${INIT_BENCH_BASELINE:-}" \
	-splicehop "$tmp/splicehop"
