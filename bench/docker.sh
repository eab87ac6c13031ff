#!/usr/bin/env bash
# Docker session start-to-exit of /bin/true: loki-supervise session
# --isolation docker next to a bare `docker run --rm` of the same image,
# interleaved (one of each per round) so daemon and load drift hit both.
# Target: loki's overhead at most 10 % (ratio <= 1.10). Skipped when no
# Docker engine answers.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=${LOKI_BIN_DIR:-$here/../bin}
SUP=$BIN/loki-supervise INIT=$BIN/loki-init
N=${N:-15}
if ! timeout 20 docker info >/dev/null 2>&1; then
	echo "docker: no engine answers docker info; skipped"
	exit 0
fi
IMAGE=loki-test:busybox
bash "$here/../test/images/busybox.sh" "$IMAGE"
python3 - "$N" "$SUP" "$INIT" "$IMAGE" <<'PY'
import statistics, subprocess, sys, time
n, sup, init, image = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
cmds = {
    "docker run --rm": ["docker", "run", "-i", "--rm", "--log-driver", "none", image, "/bin/true"],
    "loki session (docker)": [sup, "session", "--init", init, "--isolation", "docker", "--image", image, "--", "/bin/true"],
}
times = {k: [] for k in cmds}
for k, c in cmds.items():  # warm-up: image layers, CLI config
    subprocess.run(c, stdin=subprocess.DEVNULL, check=True)
for _ in range(n):
    for k, c in cmds.items():
        t = time.perf_counter()
        subprocess.run(c, stdin=subprocess.DEVNULL, check=True)
        times[k].append((time.perf_counter() - t) * 1000)
base = statistics.median(times["docker run --rm"])
print(f"docker start-to-exit, /bin/true, median of {n} interleaved (ratio to docker run --rm; target <= 1.10x)")
for k, v in times.items():
    m = statistics.median(v)
    print(f"{k:34s} {m:8.1f} ms  {m/base:5.2f}x   (min {min(v):.1f}, max {max(v):.1f})")
PY
