#!/usr/bin/env bash
# The egress proxy under a hostile peer (issue 33): inside a session with
# --allow-host, test/hostile sends 3 parallel unterminated 128 MiB request
# headers, holds 1,500 idle connections, then asks for 300 refused names.
# Printed: the supervisor's peak RSS (VmHWM), its descriptors while the
# idle connections are held, the answers the peer got, and the lines on
# the user's stderr. The proxy runs in the supervisor, outside every
# limit of the session: all of it is the supervisor's own cost.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=${LOKI_BIN_DIR:-$here/../bin}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
(cd "$here/.." && CGO_ENABLED=0 go build -o "$work/hostile" ./test/hostile)
chmod 755 "$work" "$work/hostile"
python3 - "$BIN/loki-supervise" "$BIN/loki-init" "$work/hostile" <<'PY'
import os, subprocess, sys, time
sup, init, hostile = sys.argv[1:4]
t0 = time.time()
p = subprocess.Popen([sup, "session", "--init", init, "--allow-host", "example.com", "--", hostile, "egress"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")
def status(key):
    for l in open("/proc/%d/status" % p.pid):
        if l.startswith(key + ":"):
            return int(l.split()[1])
fds = lambda: len(os.listdir("/proc/%d/fd" % p.pid))
got = {}
for line in p.stdout:
    k, _, v = line.strip().partition("=")
    if k == "hold" and v == "idle":
        got["fds while idle held"] = fds()
    elif k == "hold" and v == "done":
        got["peak RSS (VmHWM) MiB"] = "%.1f" % (status("VmHWM") / 1024)
        got["fds at the end"] = fds()
    else:
        got[k] = v
    if k == "hold":
        p.stdin.write("\n"); p.stdin.flush()
    if v == "done":
        p.stdin.close()
err = p.stderr.read()
p.wait()
got["stderr lines"] = err.count("\n")
got["exit"] = p.returncode
got["seconds"] = "%.1f" % (time.time() - t0)
for k in ["peak RSS (VmHWM) MiB", "fds while idle held", "fds at the end", "headers", "idle_open", "idle_answered", "refused", "stderr lines", "exit", "seconds"]:
    print("%-24s %s" % (k, got.get(k)))
PY
