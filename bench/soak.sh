#!/usr/bin/env bash
# make soak: the load and kill -9 soak of test/integration/soak at full size
# (the CI runs the same tests smaller). Needs root and PID namespaces; runs
# with CI=true so that a missing privilege fails instead of skipping.
# Sizes (environment, defaults below): LOKI_SOAK_SESSIONS, LOKI_SOAK_BYTES,
# LOKI_SOAK_ROUNDS, LOKI_SOAK_RUNS, LOKI_SOAK_KILL_SESSIONS,
# LOKI_SOAK_KILL_RUNS, LOKI_SOAK_KILL_BYTES, LOKI_SOAK_KILL_FRACTION.
# SOAK_RUN picks tests by regexp, e.g. SOAK_RUN=TestSessionLoad.
# Prints one table per test on stdout; the full log only on failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export LOKI_BIN_DIR=${LOKI_BIN_DIR:-$root/bin}
export LOKI_SOAK_SESSIONS=${LOKI_SOAK_SESSIONS:-200}
export LOKI_SOAK_RUNS=${LOKI_SOAK_RUNS:-100}
export LOKI_SOAK_KILL_SESSIONS=${LOKI_SOAK_KILL_SESSIONS:-50}
export LOKI_SOAK_KILL_RUNS=${LOKI_SOAK_KILL_RUNS:-50}
export LOKI_SOAK_SESSION_TIMEOUT=${LOKI_SOAK_SESSION_TIMEOUT:-40m}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LOKI_SOAK_REPORT=$work/report
echo "soak: $LOKI_SOAK_SESSIONS sessions, $LOKI_SOAK_RUNS runs, kill -9 over $LOKI_SOAK_KILL_SESSIONS sessions and $LOKI_SOAK_KILL_RUNS runs ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
start=$(date +%s)
if ! (cd "$root" && CI=true go test -count=1 -timeout 60m -v -run "${SOAK_RUN:-.}" ./test/integration/soak/) >"$work/log" 2>&1; then
	cat "$work/log"
	echo "soak: FAILED" >&2
	exit 1
fi
echo
cat "$work/report"
echo "soak: passed in $(( $(date +%s) - start ))s"
