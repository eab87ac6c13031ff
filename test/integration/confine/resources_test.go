//go:build linux

package confine

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
	"github.com/loki-sh/loki/internal/testutil/backends"
)

var nsRoot = backends.Get("namespace")

// cgroupOf prints, from inside the session, the host path of the
// session's cgroup in controller ctrl's hierarchy (v1), or the unified
// one (v2), as "cg=PATH"; its devices cgroup (v1: the runtime's own
// cgroup of a container, which no limit moves) as "dev=PATH"; its PID
// namespace; and its hostname (a container's id under docker).
const cgroupOf = `p=$(grep -E '^[0-9]+:([^:]*,)?%[1]s(,[^:]*)?:' /proc/self/cgroup | cut -d: -f3)
if [ -n "$p" ]; then echo cg=/sys/fs/cgroup/%[1]s$p; else echo cg=/sys/fs/cgroup$(grep '^0::' /proc/self/cgroup | cut -d: -f3); fi
d=$(grep -E '^[0-9]+:devices:' /proc/self/cgroup | cut -d: -f3)
if [ -n "$d" ]; then echo dev=/sys/fs/cgroup/devices$d; fi
echo ns=$(readlink /proc/self/ns/pid)
echo host=$(hostname)
`

func script(ctrl, body string) []string {
	return []string{"sh", "-c", strings.ReplaceAll(cgroupOf, "%[1]s", ctrl) + body}
}

// limitBackends are the backends that apply --pids-max and --memory-max.
func limitBackends() []backend {
	return []backend{nsRoot, backends.Get("oci-crun"), backends.Get("oci-runc"), backends.Get("docker")}
}

// assertGone: the session's cgroup (with the runtime's own, for a
// container) was removed, nothing of its PID namespace is left, and
// docker keeps no container of it. session names the cgroup loki made
// ("" when the backend's own cgroup holds the limit).
func assertGone(t *testing.T, b backend, r map[string]string, session bool) {
	t.Helper()
	if r["cg"] == "" || r["ns"] == "" {
		t.Fatalf("the session printed no cgroup or namespace: %v", r)
	}
	if session && !strings.Contains(r["cg"], "loki-session-") {
		t.Fatalf("the session was not in a cgroup of its own: %q", r["cg"])
	}
	dirs := []string{r["cg"]}
	if own := devicesCgroup(t); r["dev"] != "" && r["dev"] != own {
		dirs = append(dirs, r["dev"])
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("cgroup %s still exists after the session (stat: %v)", d, err)
		}
	}
	// docker run returns once the engine removed the container; the
	// engine's reaping of the namespace's last processes may still be
	// under way then (seen before this change too).
	bound := time.Duration(0)
	if b.Name == "docker" {
		bound = 10 * time.Second
	}
	if !testutil.WaitUntil(bound, func() bool { return len(testutil.NamespacePIDs(r["ns"])) == 0 }) {
		var left []string
		for _, pid := range testutil.NamespacePIDs(r["ns"]) {
			st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			left = append(left, strings.TrimSpace(string(st)))
		}
		t.Errorf("processes of the session's namespace left: %q", left)
	}
	if b.Name == "docker" {
		if r["host"] == "" {
			t.Fatal("no container id printed")
		}
		out, err := exec.Command("docker", "ps", "-a", "-q", "--no-trunc", "--filter", "id="+r["host"]).Output()
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("docker ps -a shows the session's container %s: %q (%v)", r["host"], out, err)
		}
	}
}

// devicesCgroup is this test's own devices cgroup dir (v1), "" on v2.
func devicesCgroup(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if parts := strings.SplitN(l, ":", 3); len(parts) == 3 && parts[1] == "devices" {
			return "/sys/fs/cgroup/devices" + parts[2]
		}
	}
	return ""
}

// limitNotes returns stderr's lines that report a limit.
func limitNotes(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "loki-supervise: ") && strings.Contains(l, " limit reached: ") {
			out = append(out, l)
		}
	}
	return out
}

// persistentBomb forks for two seconds whatever the refusals, each child
// sleeping: the cgroup stays full while loki-init must go on working.
const persistentBomb = `import os, time
end = time.time() + 2
while time.time() < end:
    try:
        if os.fork() == 0:
            os.closerange(0, 3)
            time.sleep(60)
            os._exit(0)
    except OSError:
        pass
print("survived")
`

// TestForkBombStopsAtPidsMax: on every backend with limits, the bomb's
// forks are refused at the limit, the session says so in one line, exits
// nonzero (the shell's own 2, or 125 for a session that would have
// exited 0), loki-init survives the full cgroup (no stack trace, no
// refusal of its own), and nothing is left.
func TestForkBombStopsAtPidsMax(t *testing.T) {
	bomb := `i=0; while [ $i -lt 500 ]; do sleep 60 >/dev/null 2>&1 & i=$((i+1)); done`
	cases := []struct {
		name string
		peer []string
		code int
		host bool // the peer needs the host's files (python3)
	}{
		{"sh", script("pids", bomb+`; echo survived`), 2, false},
		// The shell that forked dies of the refusal; its parent exits 0.
		{"exits-0", script("pids", `(`+bomb+`) 2>/dev/null; echo survived`), 125, false},
		{"persistent", script("pids", "exec /usr/bin/python3 -c '"+persistentBomb+"'"), 125, true},
	}
	for _, b := range limitBackends() {
		for _, tc := range cases {
			if tc.host && b.Name != nsRoot.Name {
				continue
			}
			t.Run(b.Name+"/"+tc.name, func(t *testing.T) {
				if tc.host {
					if _, err := os.Stat("/usr/bin/python3"); err != nil {
						t.Fatal("no /usr/bin/python3 (.ci/run installs it)")
					}
				}
				code, out, stderr := session(t, b, []string{"--pids-max", "48"}, tc.peer...)
				r := results(out)
				if code != tc.code || (tc.code == 2 && strings.Contains(out, "survived")) {
					t.Errorf("exit %d, stdout %q, stderr %q: want %d", code, out, stderr, tc.code)
				}
				notes := limitNotes(stderr)
				want := "loki-supervise: pids limit reached: session reached --pids-max 48: the kernel refused "
				if len(notes) != 1 || !strings.HasPrefix(notes[0], want) || !strings.HasSuffix(notes[0], fmt.Sprintf("(exit %d)", tc.code)) {
					t.Errorf("stderr %q: want one note %q...(exit %d)", stderr, want, tc.code)
				}
				if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "ACP supervisor refused") {
					t.Errorf("stderr %q: loki-init died of the limit instead of reporting the peer", stderr)
				}
				assertGone(t, b, r, true)
			})
		}
	}
}

// TestMemoryHogKilledAtMemoryMax: on every backend with limits, exit 137,
// one note naming the limit, no stack trace, nothing left. docker's own
// cgroup holds its memory limit; its note comes from the container's oom
// event.
func TestMemoryHogKilledAtMemoryMax(t *testing.T) {
	for _, b := range limitBackends() {
		t.Run(b.Name, func(t *testing.T) {
			code, out, stderr := session(t, b, []string{"--memory-max", "32M"}, script("memory",
				`x=$(head -c 100000000 /dev/zero | tr "\0" a); echo survived ${#x}`)...)
			r := results(out)
			if code != 137 || strings.Contains(out, "survived") {
				t.Errorf("exit %d, stdout %q: want 137 (stderr %q)", code, out, stderr)
			}
			notes := limitNotes(stderr)
			want := "loki-supervise: memory limit reached: session exceeded --memory-max 32M: the kernel killed "
			if b.Name == "docker" {
				want = "loki-supervise: memory limit reached: session exceeded --memory-max 32M: the kernel's OOM killer killed in the container"
			}
			if len(notes) != 1 || !strings.HasPrefix(notes[0], want) || !strings.HasSuffix(notes[0], "(exit 137)") {
				t.Errorf("stderr %q: want one note %q...(exit 137)", stderr, want)
			}
			if strings.Contains(stderr, "goroutine ") {
				t.Errorf("stderr %q: a stack trace", stderr)
			}
			assertGone(t, b, r, b.Name != "docker")
		})
	}
}

// TestLimitsVisibleInside: the values of the flags (and the default pids
// limit) are the session cgroup's, read through the host's cgroup files.
func TestLimitsVisibleInside(t *testing.T) {
	read := func(ctrl string, flags []string, files ...string) map[string]string {
		body := ""
		for _, f := range files {
			body += `echo ` + f + `=$(cat /sys/fs/cgroup/` + ctrl + `$p/` + f + `)` + "\n"
		}
		code, out, stderr := session(t, nsRoot, flags, script(ctrl, body)...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", flags, code, stderr)
		}
		return results(out)
	}
	cases := []struct {
		flags []string
		ctrl  string
		want  map[string]string
	}{
		{nil, "pids", map[string]string{"pids.max": "4096"}},
		{[]string{"--pids-max", "100"}, "pids", map[string]string{"pids.max": "100"}},
		// No limit at all: no cgroup of its own (the root has no pids.max).
		{[]string{"--pids-max", "max"}, "pids", map[string]string{"pids.max": ""}},
		{[]string{"--memory-max", "64M"}, "memory", map[string]string{"memory.limit_in_bytes": "67108864"}},
		{[]string{"--cpu-max", "0.5"}, "cpu", map[string]string{"cpu.cfs_quota_us": "50000", "cpu.cfs_period_us": "100000"}},
		{[]string{"--cpu-max", "20000 50000"}, "cpu", map[string]string{"cpu.cfs_quota_us": "20000", "cpu.cfs_period_us": "50000"}},
	}
	for _, tc := range cases {
		t.Run(strings.Join(append([]string{"default"}, tc.flags...), " "), func(t *testing.T) {
			requireV1(t, tc.ctrl)
			var files []string
			for f := range tc.want {
				files = append(files, f)
			}
			got := read(tc.ctrl, tc.flags, files...)
			for f, v := range tc.want {
				if got[f] != v {
					t.Errorf("%s = %q, want %q", f, got[f], v)
				}
			}
		})
	}
}

// requireV1 skips the v1 file checks on a v2 host (the unit tests of
// internal/session/cgroup cover v2's files).
func requireV1(t *testing.T, ctrl string) {
	t.Helper()
	if _, err := os.Stat("/sys/fs/cgroup/" + ctrl + "/cgroup.procs"); err != nil {
		t.Skipf("no cgroup v1 %s hierarchy: %v", ctrl, err)
	}
}

// TestStaleCgroupSwept: after kill -9 of the supervisor, its session's
// cgroup is left (empty); the next session in the control root removes it.
func TestStaleCgroupSwept(t *testing.T) {
	nsRoot.Require(t)
	sup, init := testutil.Binary(t, "loki-supervise"), testutil.Binary(t, "loki-init")
	ctl := t.TempDir()
	cmd := exec.Command(sup, append([]string{"session", "--init", init, "--control-root", ctl, "--wait-after-eof", "--"},
		script("pids", "echo ready; exec sleep 60")...)...)
	cmd.Dir = "/"
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	r := map[string]string{}
	for r["ready"] == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("session ended before it was ready")
			}
			if l == "ready" {
				r["ready"] = "1"
			} else if k, v, ok := strings.Cut(l, "="); ok {
				r[k] = v
			}
		case <-time.After(generous):
			t.Fatal("session not ready")
		}
	}
	cg := r["cg"]
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	empty := func() bool {
		b, err := os.ReadFile(filepath.Join(cg, "cgroup.procs"))
		return err == nil && strings.TrimSpace(string(b)) == ""
	}
	if !testutil.WaitUntil(generous, empty) {
		t.Fatalf("cgroup %s not empty after the supervisor's death", cg)
	}
	code, _, stderr := runIn(t, sup, init, ctl, "true")
	if code != 0 {
		t.Fatalf("next session: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(cg); !os.IsNotExist(err) {
		t.Errorf("stale cgroup %s not swept by the next session (stat: %v)", cg, err)
	}
}

func runIn(t *testing.T, sup, init, ctl string, peer ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(sup, append([]string{"session", "--init", init, "--control-root", ctl, "--"}, peer...)...)
	cmd.Dir = "/"
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return testutil.ExitCode(err), out.String(), errb.String()
}

// TestLimitRefusals: every refusal is one line; a limit nobody can give
// (none makes no cgroup; an unprivileged supervisor here has no writable
// cgroup) exits 127, never runs unlimited; the default pids limit alone
// is skipped there with a one-line notice.
func TestLimitRefusals(t *testing.T) {
	none := backends.Get("none")
	userns := backends.Get("namespace-userns")
	cases := []struct {
		name  string
		b     backend
		flags []string
		code  int
		ran   bool
	}{
		{"none pids", none, []string{"--pids-max", "100"}, 127, false},
		{"none memory", none, []string{"--memory-max", "1G"}, 127, false},
		{"bad pids", nsRoot, []string{"--pids-max", "-3"}, 2, false},
		{"too few pids", nsRoot, []string{"--pids-max", "7"}, 2, false},
		{"bad memory", nsRoot, []string{"--memory-max", "12Q"}, 2, false},
		{"tiny memory", nsRoot, []string{"--memory-max", "4K"}, 2, false},
		{"bad cpu", nsRoot, []string{"--cpu-max", "fast"}, 2, false},
		{"unprivileged memory", userns, []string{"--memory-max", "64M"}, 127, false},
		{"unprivileged default pids", userns, nil, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if strings.HasPrefix(tc.name, "unprivileged") && writableCgroup(t) {
				t.Skip("this host delegates a cgroup to nobody")
			}
			code, out, stderr := session(t, tc.b, tc.flags, "sh", "-c", "echo ran")
			if code != tc.code || strings.Contains(out, "ran") != tc.ran {
				t.Fatalf("exit %d, stdout %q, stderr %q: want %d, ran %v", code, out, stderr, tc.code, tc.ran)
			}
			if lines := strings.Split(strings.TrimSpace(stderr), "\n"); stderr == "" || len(lines) != 1 {
				t.Fatalf("stderr %q: want one line", stderr)
			}
		})
	}
}

// writableCgroup reports whether nobody could make a pids cgroup here.
func writableCgroup(t *testing.T) bool {
	st, err := os.Stat("/sys/fs/cgroup/pids")
	if err != nil {
		return true // v2: delegation varies; the test's premise is v1's root-only dirs
	}
	s := st.Sys().(*syscall.Stat_t)
	return s.Uid == testutil.Nobody || st.Mode().Perm()&0o002 != 0
}

// TestForkBombNeverKillsInit: on the namespace backend the peer is born
// in a pids cgroup of its own and loki-init stays outside its count, so
// a bomb that fills a small --pids-max, run 50 times at each size, never
// leaves the init unable to make a thread (the Go runtime dies of that
// with a trace): every run ends with the peer's own outcome and the
// refused-forks note.
func TestForkBombNeverKillsInit(t *testing.T) {
	bomb := script("pids", `i=0; while [ $i -lt 200 ]; do sleep 60 >/dev/null 2>&1 & i=$((i+1)); done; echo survived`)
	for _, max := range []string{"30", "8"} {
		t.Run("pids-max-"+max, func(t *testing.T) {
			for run := range 50 {
				code, out, stderr := session(t, nsRoot, []string{"--pids-max", max}, bomb...)
				notes := limitNotes(stderr)
				want := "loki-supervise: pids limit reached: session reached --pids-max " + max + ": the kernel refused "
				if code != 2 || strings.Contains(out, "survived") || len(notes) != 1 || !strings.HasPrefix(notes[0], want) ||
					strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "ACP supervisor refused") {
					t.Fatalf("run %d: exit %d, stdout %q, stderr %q: want the shell's 2 and one note %q...", run, code, out, stderr, want)
				}
				if r := results(out); !strings.HasSuffix(r["cg"], "/peer") {
					t.Fatalf("run %d: the peer's pids cgroup is %q: want the session's peer child", run, r["cg"])
				}
			}
		})
	}
}

// maxInitThreads bounds PID 1's threads in a default session under CI's
// load: 7 when quiet, 8-9 seen when the machine was busy as the session
// started (idle Go threads never exit); the spare threads it must never
// start again would make it 17 or more.
const maxInitThreads = 10

// TestInitThreadsOutsideLimit: with the init outside the peer's pids
// count, it starts no spare threads (12, which made PID 1 run 17-19): at
// the peer's start and after idling through four lease renewals PID 1
// runs at most maxInitThreads, and the peer's PID stays small (spare
// threads took PIDs before it). Issue 37's goal of at most 8 idle threads
// is bench/init.sh's row, on a quiet machine: the runtime's own idle
// threads vary with the load while the session starts (docs/loki-init.md).
func TestInitThreadsOutsideLimit(t *testing.T) {
	threads := `$(grep '^Threads:' /proc/1/status | cut -f2)`
	code, out, stderr := session(t, nsRoot, nil, script("pids", `echo pid=$$; echo threads=`+threads+`; sleep 4.5; echo idle=`+threads)...)
	r := results(out)
	for _, k := range []string{"threads", "idle"} {
		n, err := strconv.Atoi(r[k])
		if code != 0 || err != nil || n > maxInitThreads || n < 1 {
			t.Fatalf("exit %d, stdout %q, stderr %q: want PID 1 with at most %d threads, at start and idle", code, out, stderr, maxInitThreads)
		}
	}
	if pid, err := strconv.Atoi(r["pid"]); err != nil || pid > 12 {
		t.Errorf("the peer is PID %q: want at most 12", r["pid"])
	}
	t.Logf("PID 1 threads %s at the start, %s idle; peer PID %s", r["threads"], r["idle"], r["pid"])
}
