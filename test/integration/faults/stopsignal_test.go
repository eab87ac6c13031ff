//go:build linux

package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
)

// termCounter is a runner (leader) that starts one more member of its
// process group running the same code. Each counts the SIGTERMs the
// kernel delivers to it: Python's C-level handler writes one byte per
// delivery to the wakeup fd, before any coalescing in the interpreter.
// After the first TERM it listens 0.5 s more for a second, writes its
// count to DIR/ROLE.count and exits 0.
const termCounter = `
import os, select, signal, subprocess, sys, time
d, role = sys.argv[1], sys.argv[2]
r, w = os.pipe()
os.set_blocking(w, False)
signal.signal(signal.SIGTERM, lambda *a: None)
signal.set_wakeup_fd(w)
child = None
if role == "leader":
    child = subprocess.Popen([sys.executable, "-c", sys.argv[3], d, "member", sys.argv[3]])
open(os.path.join(d, role + ".ready"), "w").close()
n, until = 0, None
while True:
    left = None if until is None else until - time.monotonic()
    if left is not None and left <= 0:
        break
    ready, _, _ = select.select([r], [], [], left)
    if ready:
        n += os.read(r, 64).count(bytes([signal.SIGTERM]))
        if until is None and n:
            until = time.monotonic() + 0.5
with open(os.path.join(d, role + ".count"), "w") as f:
    f.write(str(n))
if child:
    child.wait()
`

// TestStopSignalsOnce: one stop request delivers exactly one SIGTERM to
// each member of the runner's group, the leader included, over many runs
// (the leader used to get a second one through its pidfd in about a third
// of the runs, which a runner that treats a second TERM as "force quit"
// takes as such).
func TestStopSignalsOnce(t *testing.T) {
	py := testutil.RequireCommand(t, "python3")
	runs := 30
	if !testing.Short() && os.Getenv("LOKI_SOAK") != "" {
		runs = 200
	}
	data := t.TempDir()
	env := baseEnv(data)
	var mu sync.Mutex
	counts := map[string]int{}
	sem := make(chan struct{}, 3)
	var wg sync.WaitGroup
	for i := 0; i < runs; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			got, err := stopOnce(t, py, env, i)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("run %d: %v", i, err)
				return
			}
			counts[got]++
		}(i)
	}
	wg.Wait()
	t.Logf("%d stops; TERMs received (leader/member): %v", runs, counts)
	if len(counts) != 1 || counts["1/1"] != runs {
		t.Fatalf("want exactly one SIGTERM per member in every run, got %v", counts)
	}
}

// stopOnce runs the counter, stops it once from another process and
// returns "leader/member" TERM counts.
func stopOnce(t *testing.T, py string, env []string, i int) (string, error) {
	id := fmt.Sprintf("f0000000-0000-4000-8000-%012d", 500+i)
	dir := t.TempDir()
	cmd := exec.Command(testutil.Binary(t, "loki-supervise"), "run", "--execution-id", id, "--workspace", dir, "--",
		py, "-c", termCounter, dir, "leader", termCounter)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	w := testutil.Wait(cmd)
	ready := func() bool {
		for _, r := range []string{"leader", "member"} {
			if _, err := os.Stat(filepath.Join(dir, r+".ready")); err != nil {
				return false
			}
		}
		return true
	}
	if !testutil.WaitUntil(wait, ready) {
		w.Kill()
		return "", fmt.Errorf("runner never became ready; stderr %q", stderr.String())
	}
	if o := cli(t, env, "stop", id); o.code != 0 {
		return "", fmt.Errorf("stop: exit %d, stderr %q", o.code, o.stderr)
	}
	if _, ok := w.Within(wait); !ok {
		return "", fmt.Errorf("run did not end within %v of stop", wait)
	} else if w.Err() != nil {
		return "", fmt.Errorf("run: %v; stderr %q", w.Err(), stderr.String())
	}
	var got []string
	for _, r := range []string{"leader", "member"} {
		b, err := os.ReadFile(filepath.Join(dir, r+".count"))
		if err != nil {
			return "", fmt.Errorf("%s count: %v", r, err)
		}
		got = append(got, string(b))
	}
	return strings.Join(got, "/"), nil
}
