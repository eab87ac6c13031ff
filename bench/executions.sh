#!/usr/bin/env bash
# Durable executions: `loki-supervise run -- /bin/true` from start to its
# terminal record, and stop latency (stop request to terminal record) for a
# runner that obeys SIGTERM and for one that ignores it (grace 1 s), next to
# the bare process-group equivalents (setsid, and systemd-run --scope where
# systemd runs). Each loki figure includes the descendant check's 0.2 s
# quiescence period (supervision.md), which a bare process does not wait
# for. Figures on a shared, loaded VM: compare the ratios. Under a minute.
set -euo pipefail
BIN=${LOKI_BIN_DIR:-$(cd "$(dirname "$0")/.." && pwd)/bin}
N=${N:-8}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export LOKI_DATA_DIR=$work/data
systemd=0
if command -v systemd-run >/dev/null && systemctl is-system-running >/dev/null 2>&1; then systemd=1; fi
python3 - "$BIN/loki-supervise" "$work" "$N" "$systemd" <<'PY'
import json, os, signal, subprocess, sys, time, uuid
sup, work, n, systemd = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
ws = os.path.join(work, "ws"); os.makedirs(ws)
builds = os.path.join(os.environ["LOKI_DATA_DIR"], "dashboard", "builds")
env = dict(os.environ)
quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def record(eid):
    try:
        with open(os.path.join(builds, eid, "state.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}

def await_state(eid, want, limit=30.0):
    # Poll the record the way a dashboard would, but every 2 ms.
    end = time.perf_counter() + limit
    while time.perf_counter() < end:
        if record(eid).get("state") == want:
            return time.perf_counter()
        time.sleep(0.002)
    raise SystemExit("bench: %s never reached %s" % (eid, want))

def loki_true(e=env, w=ws):
    eid = str(uuid.uuid4())
    t = time.perf_counter()
    p = subprocess.Popen([sup, "run", "--execution-id", eid, "--workspace", w, "--", "/bin/true"], env=e, **quiet)
    done = await_state(eid, "exited")
    if p.wait(30) != 0:
        raise RuntimeError("run exited %d" % p.returncode)
    return done - t

# The same run under the Linux host boundary (Landlock ruleset, no
# capabilities, seccomp filter): a workspace inside the workspace roots.
protected = os.path.join(work, "protected")
cws = os.path.join(protected, "ws", "project"); os.makedirs(cws)
cout = os.path.join(work, "out"); os.makedirs(cout)
confined = dict(env, LOKI_HOST_LANDLOCK="1", LOKI_HOST_PROTECTED_ROOT=protected,
                LOKI_WORKSPACE_ROOTS=os.path.join(protected, "ws"), LOKI_HOST_RUNTIME_READ_PATHS=cout,
                LOKI_HOST_RUNTIME_WRITE_PATHS=cout, LOKI_HOST_CHILD_PATH="/usr/bin:/bin:/usr/sbin:/sbin",
                LOKI_HOST_RESERVED_PORTS="8080")

def bare(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=False, **quiet)
    return time.perf_counter() - t

def loki_stop(script, grace):
    eid = str(uuid.uuid4())
    e = dict(env, LOKI_BUILD_STOP_GRACE_SECONDS=str(grace))
    p = subprocess.Popen([sup, "run", "--execution-id", eid, "--workspace", ws, "--", "/bin/sh", "-c", script], env=e, **quiet)
    await_state(eid, "running")
    time.sleep(0.3)  # let the runner reach its sleep (and install its trap)
    t = time.perf_counter()
    subprocess.run([sup, "stop", eid], env=env, check=True, **quiet)
    done = await_state(eid, "exited")
    p.wait(30)
    return done - t

def setsid_stop(script, grace):
    p = subprocess.Popen(["/bin/sh", "-c", script], start_new_session=True, **quiet)
    time.sleep(0.3)
    t = time.perf_counter()
    os.killpg(p.pid, signal.SIGTERM)
    try:
        p.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(30)
    return time.perf_counter() - t

def mean_ms(f, *a):
    f(*a)  # warm-up
    return sum(f(*a) for _ in range(n)) * 1000 / n

def table(title, rows):
    print(title)
    base = rows[0][1]
    for name, ms in rows:
        print("  %-44s %9.1f ms  %7.2fx" % (name, ms, ms / base))
    print()

rows = [("setsid /bin/true", mean_ms(bare, ["setsid", "-w", "/bin/true"]))]
if systemd:
    rows.append(("systemd-run --scope /bin/true", mean_ms(bare, ["systemd-run", "--scope", "-q", "/bin/true"])))
rows.append(("loki-supervise run -- /bin/true (to record)", mean_ms(loki_true)))
try:
    rows.append(("same, LOKI_HOST_LANDLOCK=1 (confined)", mean_ms(loki_true, confined, cws)))
except (RuntimeError, SystemExit) as e:
    print("  (confined row skipped: %s; Landlock ABI 6 needed)" % e)
table("start to terminal record, /bin/true, mean of %d (ratio to setsid)" % n, rows)
if not systemd:
    print("  (systemd-run --scope: systemd is not running here, row skipped)\n")

obey, ignore = "exec sleep 60", "trap '' TERM; sleep 60"
table("stop latency, runner obeys SIGTERM, mean of %d (ratio to killpg + wait)" % n, [
    ("setsid + killpg(SIGTERM) + wait", mean_ms(setsid_stop, obey, 1.0)),
    ("loki-supervise stop (poll 0.2 s, to record)", mean_ms(loki_stop, obey, 1.0)),
])
table("stop latency, runner ignores SIGTERM, grace 1 s, mean of %d" % n, [
    ("setsid + killpg TERM, 1 s, KILL + wait", mean_ms(setsid_stop, ignore, 1.0)),
    ("loki-supervise stop (grace 1 s, to record)", mean_ms(loki_stop, ignore, 1.0)),
])
PY
