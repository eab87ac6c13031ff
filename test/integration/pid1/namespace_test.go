//go:build linux

package pid1

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/pid1/pid1test"
	"github.com/loki-sh/loki/internal/testutil"
)

// After the init exits nothing of its namespace survives: not daemons that
// left the session, ignore SIGTERM/SIGHUP and closed their stdio.
func TestNothingSurvivesTheInit(t *testing.T) {
	t.Parallel()
	marks := markerDir(t)
	ready, proceed := filepath.Join(marks, "ready"), filepath.Join(marks, "go")
	s := start(t, pid1test.Config{KeepStdinOpen: true, Spec: shell(
		`for i in 1 2 3; do setsid sh -c 'trap "" TERM HUP INT; exec sleep 600' </dev/null >/dev/null 2>&1 & done
(nohup sleep 600 </dev/null >/dev/null 2>&1 &)
echo ok > ` + ready + `
while [ ! -e ` + proceed + ` ]; do sleep 0.05; done
exit 0`)})
	waitFile(t, ready)
	var pids []int
	if !testutil.WaitUntil(waitShort, func() bool { pids = s.PIDs(); return len(pids) >= 6 }) {
		t.Fatalf("expected the init, the peer and 4 daemons, saw %v", pids)
	}
	if err := os.WriteFile(proceed, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	requireCode(t, s.Wait(waitShort), 0)
	pid1test.RequirePIDsGone(t, s.Namespace(), pids, 5*time.Second)
	pid1test.RequireGone(t, s.Namespace(), 5*time.Second)
}

// The init is non-dumpable: a peer with the same uid and no capabilities
// (as under Docker) cannot read /proc/1/environ or /proc/1/mem, nor follow /proc/1/fd or
// /proc/1/root, while
// the same peer can read a dumpable sibling's environ (so the denial is the
// init's protection, not a blanket /proc restriction).
func TestPeerCannotInspectTheInit(t *testing.T) {
	t.Parallel()
	setpriv := requireSetpriv(t)
	s := start(t, pid1test.Config{
		Wrap: []string{setpriv, "--bounding-set=-all", "--inh-caps=-all", "--"},
		Spec: shell(`sleep 30 & sib=$!
grep -q '^CapEff:[[:space:]]*0*$' /proc/self/status && echo no-caps
cat /proc/$sib/environ >/dev/null 2>&1 && readlink /proc/$sib/fd/1 >/dev/null 2>&1 && echo sibling-readable
cat /proc/1/environ >/dev/null 2>&1 && echo init-environ-readable
readlink /proc/1/fd/1 >/dev/null 2>&1 && echo init-fd-readable
ls /proc/1/root/ >/dev/null 2>&1 && echo init-root-readable
head -c1 /proc/1/mem >/dev/null 2>&1 && echo init-mem-readable
kill $sib; exit 0`),
	})
	r := s.Wait(waitShort)
	requireCode(t, r, 0)
	if got := string(r.Stdout); got != "no-caps\nsibling-readable\n" {
		t.Fatalf("peer saw %q", got)
	}
}

func requireSetpriv(t *testing.T) string {
	t.Helper()
	return testutil.RequireCommand(t, "setpriv")
}

// SIGTERM from outside reaches every process of the peer's session, even
// one in another process group, and the peer's own exit is the outcome.
func TestSignalIsForwardedToTheSession(t *testing.T) {
	t.Parallel()
	marks := markerDir(t)
	ready, got := filepath.Join(marks, "ready"), filepath.Join(marks, "got")
	jobReady, job := filepath.Join(marks, "job-ready"), filepath.Join(marks, "job.sh")
	// The job leads a process group of its own in the peer's session (a
	// shell without a terminal does no job control, so python3 makes the
	// group), and says it is ready only once its trap is set.
	script := "trap 'echo job >> " + got + "; exit 0' TERM\necho ok > " + jobReady + "\nwhile :; do sleep 0.05; done\n"
	if err := os.WriteFile(job, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	py := testutil.RequireCommand(t, "python3")
	s := start(t, pid1test.Config{KeepStdinOpen: true, Flags: []string{"-lease-duration", "3s", "-grace", "20s"},
		Spec: shell(py + ` -c 'import os,sys; os.setpgid(0, 0); os.execv("/bin/sh", ["sh", sys.argv[1]])' ` + job + ` &
trap 'wait; echo peer >> ` + got + `; exit 5' TERM
echo ok > ` + ready + `
while :; do sleep 0.05; done`)})
	waitFile(t, ready)
	waitFile(t, jobReady)
	if err := s.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := s.Wait(waitShort)
	requireCode(t, r, 5)
	b, _ := os.ReadFile(got)
	if lines := strings.Fields(string(b)); len(lines) != 2 {
		t.Fatalf("SIGTERM reached %q, want the job and the peer", lines)
	}
}

// A session that ignores the forwarded signal is killed when the grace
// runs out, the init exits 128+N, and nothing survives.
func TestGraceExpiryKillsTheSession(t *testing.T) {
	t.Parallel()
	marks := markerDir(t)
	ready := filepath.Join(marks, "ready")
	s := start(t, pid1test.Config{KeepStdinOpen: true, Flags: []string{"-lease-duration", "3s", "-grace", "1s"},
		Spec: shell(`trap '' TERM INT HUP; echo ok > ` + ready + `; while :; do sleep 0.05; done`)})
	waitFile(t, ready)
	sent := time.Now()
	if err := s.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := s.Wait(waitShort)
	requireCode(t, r, 128+int(syscall.SIGINT))
	if d := time.Since(sent); d < time.Second-50*time.Millisecond {
		t.Fatalf("killed %v after the signal, before the 1 s grace", d)
	}
	pid1test.RequireGone(t, s.Namespace(), waitShort)
}

// A peer killed by a signal is a failure (125), never a success, and
// its line names the signal (after the class, its first word).
func TestSignaledPeerIs125(t *testing.T) {
	t.Parallel()
	s := start(t, pid1test.Config{Spec: shell("kill -KILL $$")})
	r := s.Wait(waitShort)
	requireCode(t, r, 125)
	if string(r.Stderr) != "ACP supervisor refused at supervision: peer-signaled by signal 9 (SIGKILL)\n" {
		t.Fatalf("stderr %q", r.Stderr)
	}
}

// The peer shares the init's uid, so it may signal PID 1 with anything.
// Every signal the Go runtime would turn into an exit or a goroutine dump
// (sent by kill, a fault it is not) must leave the init running and quiet:
// the peer's own exit stays the outcome. SIGTERM/SIGINT/SIGHUP are left
// out (they are forwarded, by design) and so are SIGKILL/SIGSTOP, which
// the kernel never delivers to a namespace's init from inside.
func TestPeerCannotKillTheInitWithSignals(t *testing.T) {
	t.Parallel()
	var sigs []string
	for n := 1; n <= 64; n++ {
		switch syscall.Signal(n) {
		case syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGKILL, syscall.SIGSTOP:
			continue
		}
		sigs = append(sigs, strconv.Itoa(n))
	}
	s := start(t, pid1test.Config{Spec: shell(`for n in ` + strings.Join(sigs, " ") + `; do
  kill -$n 1 || exit 99
done
sleep 0.2; echo alive; exit 7`)})
	r := s.Wait(waitShort)
	requireCode(t, r, 7)
	if string(r.Stdout) != "alive\n" || len(r.Stderr) != 0 {
		t.Fatalf("stdout %q stderr %q", r.Stdout, r.Stderr)
	}
}
