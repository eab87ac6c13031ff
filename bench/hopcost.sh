#!/usr/bin/env bash
# bench/hopcost.sh: what a forwarding hop costs the peer itself. The same
# peer (head -c, 4 KiB writes) sends BYTES into dd three ways: straight
# into dd's pipe (what a pass-through init such as tini gives it), through
# bench/splicehop (the pipe drained by splice, as loki-init drains it), and
# through splicehop -copy (drained by read/write). Peer and hop run on
# CPU 0, dd on CPU 1 (on a machine with one CPU, all on CPU 0). Prints MiB/s
# and the CPU ms per GiB of the peer and of the hop, median of ROUNDS
# interleaved rounds:
#   HOPCOST_BYTES=2147483648 HOPCOST_ROUNDS=3
# Why it matters: a pipe read by read(2) recycles its pages into the next
# write; a pipe drained by splice hands them on, so each write allocates a
# fresh page. loki-init's throughput gap to pass-through inits is mostly
# this, in the peer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bytes=${HOPCOST_BYTES:-2147483648}
rounds=${HOPCOST_ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/splicehop" ./bench/splicehop)
near=0 far=1
[ "$(nproc)" -gt 1 ] || far=0
# timed REPORT CMD...: runs CMD under sh and writes its user and system
# time (sh's `times`, second line: the children's) to REPORT.
cat >"$tmp/timed" <<'SH'
#!/bin/sh
report=$1; shift
"$@"; rc=$?
times >"$report.all" # in a pipeline, times would run in a subshell
sed -n 2p "$report.all" >"$report"
exit $rc
SH
chmod +x "$tmp/timed"
ms() { # "0m1.230000s 0m0.450000s" -> 1680
	awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2] } printf "%d", t * 1000 }' "$1"
}
declare -A rate peer hop
gib=$(awk -v b="$bytes" 'BEGIN { print b / 2^30 }')
for r in $(seq "$rounds"); do
	for mode in direct splice copy; do
		start=$(date +%s%N)
		case $mode in
		direct) taskset -c $near "$tmp/timed" "$tmp/p" head -c "$bytes" /dev/zero |
			taskset -c $far dd of=/dev/null bs=1M 2>/dev/null
			echo "0m0s 0m0s" >"$tmp/h" ;;
		splice) taskset -c $near "$tmp/timed" "$tmp/p" head -c "$bytes" /dev/zero |
			taskset -c $near "$tmp/timed" "$tmp/h" "$tmp/splicehop" |
			taskset -c $far dd of=/dev/null bs=1M 2>/dev/null ;;
		copy) taskset -c $near "$tmp/timed" "$tmp/p" head -c "$bytes" /dev/zero |
			taskset -c $near "$tmp/timed" "$tmp/h" "$tmp/splicehop" -copy |
			taskset -c $far dd of=/dev/null bs=1M 2>/dev/null ;;
		esac
		end=$(date +%s%N)
		rate[$mode]+="$(awk -v b="$bytes" -v ns=$((end - start)) 'BEGIN { printf "%d", b / 2^20 / (ns / 1e9) }') "
		peer[$mode]+="$(awk -v m="$(ms "$tmp/p")" -v g="$gib" 'BEGIN { printf "%d", m / g }') "
		hop[$mode]+="$(awk -v m="$(ms "$tmp/h")" -v g="$gib" 'BEGIN { printf "%d", m / g }') "
	done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf '%-34s %10s %16s %16s\n' "peer -> dd (peer+hop CPU $near, dd CPU $far)" "MiB/s" "peer CPU ms/GiB" "hop CPU ms/GiB"
for mode in direct splice copy; do
	case $mode in
	direct) label="straight (pass-through init)" ;;
	splice) label="drained by splice (as loki-init)" ;;
	copy) label="drained by read/write" ;;
	esac
	printf '%-34s %10s %16s %16s\n' "$label" "$(median <<<"${rate[$mode]}")" \
		"$(median <<<"${peer[$mode]}")" "$(median <<<"${hop[$mode]}")"
done
