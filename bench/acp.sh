#!/usr/bin/env bash
# bench/acp.sh: what an ACP client pays per message through each stdio
# path. One 230-byte JSON-RPC line is written to `cat` and read back,
# ACP_N times (3000) per run, ACP_R rounds (3) taken round-robin so the
# machine's load touches every path alike: round trip p50/p99/max and the
# first echo after spawn, for cat directly, bwrap --unshare-pid
# --as-pid-1, and loki-supervise session through none, namespace and oci
# (crun), with ratios to bwrap giving what a default session gives (every
# namespace but the network's, read-only host, writable cwd, private
# /tmp, /dev, /proc: issue 37's "same confinement"); beside them, crun
# alone (the floor of the oci path) and namespace --fs host; the first echo is the
# median of every spawn (ACP_STARTS, 10, more per round only time it);
# the --relay rows keep the stdio relay the
# client's own pipes otherwise bypass (the path before), and the cat
# pipelines are the floor of a relay: one and two extra hops through a C
# process (the relay path has two: the supervisor's and loki-init's
# output forwarder). Then 1 GiB stdin -> cat -> stdout through
# bwrap and the loki backends, best of ACP_TR (3), ratios to plain bwrap.
# Needs root (namespaces). Compare within one run: the VM's cross-CPU
# wakeups move every absolute figure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BIN=${LOKI_BIN_DIR:-$root/bin}
SUP=$BIN/loki-supervise INIT=$BIN/loki-init
N=${ACP_N:-3000} R=${ACP_R:-3} TR=${ACP_TR:-3}
if [ "$(id -u)" != 0 ]; then echo "bench/acp.sh: needs root; skipped" >&2; exit 0; fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# The oci rows' rootfs: a private user namespace's root must reach it.
chmod 755 "$work"
mkdir -p "$work/rootfs/bin" "$work/rootfs/proc" "$work/rootfs/dev" "$work/rootfs/sys" "$work/rootfs/tmp"
cp /bin/busybox "$work/rootfs/bin/"
for a in $(busybox --list); do [ "$a" = busybox ] || ln -sf busybox "$work/rootfs/bin/$a"; done
(cd "$root" && go build -o "$work/rttbench" ./bench/rttbench)
# The oci floor: crun alone running cat in its default container (crun
# refuses a hybrid host's cgroup2 mount, so it is hidden, as loki's oci
# shim does).
mkdir "$work/crun" && (cd "$work/crun" && crun spec && python3 -c 'import json,sys
c=json.load(open("config.json")); c["process"]["args"]=["cat"]; c["process"]["terminal"]=False
c["root"]={"path":sys.argv[1],"readonly":True}; json.dump(c,open("config.json","w"))' "$work/rootfs")
S="$SUP session --init $INIT"
variants=(
	"cat=exec cat"
	"cat | cat (1 hop)=exec cat | cat"
	"cat | cat | cat (2 hops)=exec cat | cat | cat"
	"bwrap=exec bwrap --unshare-pid --as-pid-1 --dev-bind / / cat"
	"bwrap, same confinement=exec bwrap --unshare-all --share-net --ro-bind / / --bind $PWD $PWD --tmpfs /tmp --dev /dev --proc /proc --die-with-parent cat"
	"crun alone (oci floor)=exec unshare -m --propagation private sh -c 'umount /sys/fs/cgroup/unified 2>/dev/null; exec crun run -b $work/crun loki-bench-\$\$'"
	"loki none=exec $S --isolation none -- cat"
	"loki namespace=exec $S --isolation namespace -- cat"
	"loki namespace --fs host=exec $S --isolation namespace --fs host -- cat"
	"loki oci (crun)=exec $S --isolation oci --runtime crun --rootfs $work/rootfs -- cat"
	"namespace --relay=exec $S --relay --isolation namespace -- cat"
	"oci (crun) --relay=exec $S --relay --isolation oci --runtime crun --rootfs $work/rootfs -- cat"
)
if [ -n "${ACP_BASELINE:-}" ]; then
	# An older build beside this one, in the same run (before/after).
	variants+=("base namespace=exec $ACP_BASELINE/loki-supervise session --init $ACP_BASELINE/loki-init -- cat")
	variants+=("base oci (crun)=exec $ACP_BASELINE/loki-supervise session --init $ACP_BASELINE/loki-init --isolation oci --runtime crun --rootfs $work/rootfs -- cat")
fi
echo "ACP round trip: a ${ACP_SIZE:-230}-byte line echoed by cat, $N per run, $R rounds pooled"
"$work/rttbench" -n "$N" -r "$R" -starts "${ACP_STARTS:-10}" -size "${ACP_SIZE:-230}" -base "bwrap, same confinement" "${variants[@]}"
echo
echo "relay, 1 GiB stdin -> cat -> stdout, best of $TR (ratio to bwrap)"
tp() { python3 -c 'import sys,time,subprocess
best=0
for _ in range(int(sys.argv[2])):
    t=time.perf_counter(); subprocess.run(sys.argv[1], shell=True, check=True)
    best=max(best, 1024/(time.perf_counter()-t))
print("%.0f" % best)' "$1" "$TR"; }
for pin in "" "taskset -c 0"; do
	tag=${pin:-(free)}
	# Read through a pipe (as a client would): a file or /dev/null as
	# stdout keeps loki's relay, a pipe lets the peer write it directly.
	b=$(tp "head -c 1G /dev/zero | $pin bwrap --unshare-pid --as-pid-1 --dev-bind / / cat | cat > /dev/null")
	printf '%-34s %6s MiB/s\n' "bwrap $tag" "$b"
	for v in "namespace:--isolation namespace" "oci (crun):--isolation oci --runtime crun --rootfs $work/rootfs" "namespace --relay:--relay --isolation namespace"; do
		m=$(tp "head -c 1G /dev/zero | $pin $S ${v#*:} -- cat | cat > /dev/null")
		printf '%-34s %6s MiB/s  %5.2fx\n' "loki ${v%%:*} $tag" "$m" "$(python3 -c "print($m/$b)")"
	done
done
