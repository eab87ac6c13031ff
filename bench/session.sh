#!/usr/bin/env bash
# Session start-to-exit latency for /bin/true per backend, next to unshare,
# bwrap and a bare crun run; relay throughput of 1 GiB through the whole
# chain next to a plain pipe. Figures on a shared, loaded VM: compare the
# ratios, not the absolute numbers.
set -euo pipefail
BIN=${LOKI_BIN_DIR:-$(cd "$(dirname "$0")/.." && pwd)/bin}
SUP=$BIN/loki-supervise INIT=$BIN/loki-init
N=${N:-20} R=${R:-3}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# The oci rows' rootfs: a private user namespace's root must reach it.
chmod 755 "$work"
mkdir -p "$work/rootfs/bin"; cp /bin/busybox "$work/rootfs/bin/"
for a in $(busybox --list); do [ "$a" = busybox ] || ln -sf busybox "$work/rootfs/bin/$a"; done
ms() { python3 -c 'import sys,time,subprocess
n=int(sys.argv[1]); c=sys.argv[2:]; t=time.perf_counter()
for _ in range(n): subprocess.run(c, stdin=subprocess.DEVNULL, check=False)
print("%.2f" % ((time.perf_counter()-t)*1000/n))' "$N" "$@"; }
base=$(ms unshare --pid --fork /bin/true)
row() { printf '%-34s %9s ms  %6.2fx\n' "$1" "$2" "$(python3 -c "print($2/$base)")"; }
echo "start-to-exit latency, /bin/true, mean of $N (ratio to unshare --pid --fork)"
row "unshare --pid --fork" "$base"
row "bwrap --unshare-pid --as-pid-1" "$(ms bwrap --unshare-pid --as-pid-1 --dev-bind / / /bin/true)"
mkdir -p "$work/bundle"; (cd "$work/bundle" && runc spec && python3 - "$work/rootfs" <<'PY'
import json,sys
c=json.load(open("config.json")); c["root"]={"path":sys.argv[1],"readonly":True}
c["process"].update(terminal=False,args=["/bin/true"])
c["mounts"]=[m for m in c["mounts"] if m["type"]!="cgroup"]
json.dump(c,open("config.json","w"))
PY
)
# crun refuses this VM's hybrid cgroups unless run through loki's shim.
row "crun run (same bundle, no loki)" "$(ms unshare -m "$SUP" __oci-cgroup-shim "$(command -v crun)" run --bundle "$work/bundle" "bench-crun-$$")"
row "runc run (same rootfs, no loki)" "$(ms runc run --bundle "$work/bundle" "bench-runc-$$")"
row "loki session (namespace)" "$(ms "$SUP" session --init "$INIT" -- /bin/true)"
row "loki session (none)" "$(ms "$SUP" session --isolation none -- /bin/true)"
row "loki session (oci, runc)" "$(ms "$SUP" session --init "$INIT" --isolation oci --runtime runc --rootfs "$work/rootfs" -- /bin/true)"
row "loki session (oci, crun)" "$(ms "$SUP" session --init "$INIT" --isolation oci --runtime crun --rootfs "$work/rootfs" -- /bin/true)"
echo
croot=/run; [ "$(id -u)" = 0 ] || croot=${XDG_RUNTIME_DIR:-${TMPDIR:-/tmp}}
echo "(control root under $croot, on $(df -T "$croot" | awk 'NR==2 {print $2}'): every lease renewal is an fsync there)"
echo
echo "relay throughput, 1 GiB, best of $R (ratio to a plain pipe); \"both\" is stdin -> cat -> stdout,"
echo "\"stdin\" only feeds the peer (cat > /dev/null inside), \"stdout\" only reads it (head inside)"
tp() { python3 -c 'import sys,time,subprocess
best=0
for _ in range(int(sys.argv[2])):
    t=time.perf_counter(); subprocess.run(sys.argv[1], shell=True, check=True)
    best=max(best, 1024/(time.perf_counter()-t))
print("%.0f" % best)' "$1" "$R"; }
ratio() { printf '%-34s %6s MiB/s  %5.2fx\n' "$1" "$2" "$(python3 -c "print($2/$3)")"; }
for pin in "" "taskset -c 0"; do
	tag=${pin:-(free)}
	p=$(tp "head -c 1G /dev/zero | $pin cat > /dev/null")
	printf '%-34s %6s MiB/s\n' "plain pipe $tag" "$p"
	ratio "loki namespace, both $tag" "$(tp "head -c 1G /dev/zero | $pin $SUP session --init $INIT -- cat > /dev/null")" "$p"
	ratio "loki namespace, stdin $tag" "$(tp "head -c 1G /dev/zero | $pin $SUP session --init $INIT -- sh -c 'exec cat > /dev/null'")" "$p"
	ratio "loki namespace, stdout $tag" "$(tp "$pin $SUP session --init $INIT -- head -c 1G /dev/zero > /dev/null")" "$p"
	ratio "loki none, both $tag" "$(tp "head -c 1G /dev/zero | $pin $SUP session --isolation none -- cat > /dev/null")" "$p"
done
