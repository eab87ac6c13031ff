package lineage

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/proc/procid"
)

func TestStartExecFailures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		args []string
		want error
		code int
	}{
		{"missing on PATH", []string{"loki-no-such-command-xyz"}, ErrNotFound, 127},
		{"missing path", []string{filepath.Join(dir, "absent")}, ErrNotFound, 127},
		{"not executable", []string{write("plain", "#!/bin/sh\n", 0o600)}, ErrPermission, 126},
		{"directory", []string{dir}, ErrPermission, 126},
		// The file is executable but the kernel refuses its format: the
		// gate reports ENOEXEC after exec.
		{"bad format", []string{write("garbage", "\x00\x01\x02 not a program", 0o700)}, ErrPermission, 126},
		// The interpreter is missing: ENOENT from execve, like a shell's 127.
		{"missing interpreter", []string{write("noint", "#!/loki/no/such/interpreter\n", 0o700)}, ErrNotFound, 127},
		{"empty argv", nil, ErrLaunch, 125},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Start(Command{Args: c.args, Dir: dir, Env: testEnv()})
			if err == nil {
				r.Reconcile(0)
				r.Close()
				t.Fatalf("Start(%q) succeeded", c.args)
			}
			if !errors.Is(err, c.want) || ExitCodeFor(err) != c.code {
				t.Fatalf("Start(%q) = %v (code %d), want %v (code %d)", c.args, err, ExitCodeFor(err), c.want, c.code)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}

// A runner that exits immediately after exec is a successful launch whose
// status is kept.
func TestFastExitIsNotLaunchFailure(t *testing.T) {
	for i := 0; i < 20; i++ {
		r, err := Start(Command{Args: []string{"true"}, Env: testEnv()})
		if err != nil {
			t.Fatalf("iteration %d: Start(true): %v", i, err)
		}
		waitDone(t, r, 30*time.Second)
		if code, sig := r.Status(); code != 0 || sig != 0 {
			t.Fatalf("iteration %d: status (%d, %d), want (0, 0)", i, code, sig)
		}
		if err := r.Refresh(); err != nil {
			t.Fatalf("Refresh after exit: %v", err)
		}
		r.Close()
	}
}

func TestStatusCodesAndSignals(t *testing.T) {
	cases := []struct {
		name     string
		script   string
		code     int
		signaled int
	}{
		{"exit 3", "exit 3", 3, 0},
		{"killed by SIGKILL", "kill -9 $$", -1, 9},
		{"killed by SIGTERM", "kill -TERM $$", -1, 15},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _ := startSh(t, c.script)
			waitDone(t, r, 30*time.Second)
			if code, sig := r.Status(); code != c.code || sig != c.signaled {
				t.Fatalf("status (%d, %d), want (%d, %d)", code, sig, c.code, c.signaled)
			}
		})
	}
}

// The runner is a session leader, carries the lineage token and not the
// gate's variable, and its recorded identity is the live process's.
func TestRunnerIsTrackedSessionLeader(t *testing.T) {
	r, _ := startSh(t, "exec sleep 300")
	st, err := procid.Stat(r.PID())
	if err != nil {
		t.Fatal(err)
	}
	if st.PGID != r.PID() || st.SID != r.PID() {
		t.Fatalf("pid %d pgid %d sid %d: not a session leader", r.PID(), st.PGID, st.SID)
	}
	if !r.Identity().Matches() {
		t.Fatal("recorded identity does not match the live runner")
	}
	env := waitEnviron(t, r.PID(), "sleep")
	if !bytes.Contains(env, []byte(TokenEnv+"="+r.Token()+"\x00")) {
		t.Fatalf("runner environment lacks the lineage token")
	}
	if bytes.Contains(env, []byte(gateEnv+"=")) {
		t.Fatalf("runner environment still holds %s", gateEnv)
	}
	if r.PidFD() < 0 {
		t.Logf("no pidfd on this kernel")
	}
	if err := r.Refresh(); err != nil {
		t.Fatal(err)
	}
	if m := r.Members(); len(m) != 1 || m[0] != r.Identity() {
		t.Fatalf("members %v, want only the runner", m)
	}
	out := r.Reconcile(2 * time.Second)
	waitDone(t, r, 30*time.Second)
	if out.Detected || !out.Quiescent || len(out.TermSent) != 0 {
		t.Fatalf("outcome %+v: runner alone must not count as a descendant", out)
	}
	if _, sig := r.Status(); sig != 15 {
		t.Fatalf("runner signal %d, want SIGTERM from reconcile", sig)
	}
}

// waitEnviron returns the environment once the process has exec'd comm.
func waitEnviron(t *testing.T, pid int, comm string) []byte {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, _ := os.ReadFile("/proc/" + itoa(pid) + "/comm")
		if strings.TrimSpace(string(c)) == comm {
			b, err := os.ReadFile("/proc/" + itoa(pid) + "/environ")
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d never became %s", pid, comm)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Processes the supervisor starts for itself are its children too; they
// must never be adopted into a runner's lineage.
func TestSupervisorChildrenAreNotAdopted(t *testing.T) {
	own := exec.Command("sleep", "300")
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = own.Process.Kill(); _ = own.Wait() }()
	ownID, err := procid.Capture(own.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := startSh(t, "sleep 300 & exit 0")
	waitDone(t, r, 30*time.Second)
	out := r.Reconcile(time.Second)
	if !out.Detected || !out.Quiescent {
		t.Fatalf("outcome %+v: the runner's own escapee was not handled", out)
	}
	for _, pid := range append(append(out.TermSent, out.KillSent...), out.RemainingPIDs...) {
		if pid == own.Process.Pid {
			t.Fatalf("outcome %+v touched the supervisor's own child %d", out, pid)
		}
	}
	if !ownID.Matches() {
		t.Fatal("the supervisor's own child was killed")
	}
}

// A tracking failure (here: /proc unreadable) is an error, never an empty
// lineage.
func TestTrackingFailureIsAnError(t *testing.T) {
	r, _ := startSh(t, "exec sleep 300")
	real := r.tr.src
	r.tr.src = procSource{root: filepath.Join(t.TempDir(), "no-proc")}
	err := r.Refresh()
	r.tr.src = real
	if !errors.Is(err, ErrTracking) {
		t.Fatalf("Refresh with /proc unreadable = %v, want ErrTracking", err)
	}
	r.tr.src = procSource{root: filepath.Join(t.TempDir(), "no-proc")}
	out := r.Reconcile(0)
	r.tr.src = real
	if out.Error == "" || !out.Checked {
		t.Fatalf("Reconcile with /proc unreadable = %+v, want an error", out)
	}
}

// Stdin, stdout and stderr reach the runner as given.
func TestStdio(t *testing.T) {
	dir := t.TempDir()
	in, err := os.Create(filepath.Join(dir, "in"))
	if err != nil {
		t.Fatal(err)
	}
	in.WriteString("hello\n")
	in.Seek(0, 0)
	out, _ := os.Create(filepath.Join(dir, "out"))
	errf, _ := os.Create(filepath.Join(dir, "err"))
	r, err := Start(Command{Args: []string{"sh", "-c", "read x; echo \"out:$x\"; echo err >&2; pwd"}, Dir: dir, Env: testEnv(), Stdin: in, Stdout: out, Stderr: errf})
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, r, 30*time.Second)
	r.Close()
	gotOut, _ := os.ReadFile(out.Name())
	gotErr, _ := os.ReadFile(errf.Name())
	if string(gotOut) != "out:hello\n"+dir+"\n" || string(gotErr) != "err\n" {
		t.Fatalf("stdout %q stderr %q", gotOut, gotErr)
	}
}
