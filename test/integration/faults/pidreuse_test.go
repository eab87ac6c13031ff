//go:build linux

package faults

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/proc/lineage"
	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/testutil"
)

// reuseReport is what the pid-reuse helper found, printed as JSON.
type reuseReport struct {
	Error string `json:"error,omitempty"`
	// Library level: a recorded group whose pid now names an impostor
	// that is itself a session leader (pid == pgid == sid).
	Pid               int    `json:"pid"`
	VictimToken       string `json:"victim_token"`
	ImpostorToken     string `json:"impostor_token"`
	GroupSignalErr    string `json:"group_signal_err"`
	LineageSent       bool   `json:"lineage_sent"`
	ImpostorAlive     bool   `json:"impostor_alive"`
	SameTickTokenSeen bool   `json:"same_tick_token_seen"`
	// live and pidfd are what the supervisor holds in memory for a runner
	// it started: an identity captured alive and a pidfd opened then.
	live  procid.Identity
	pidfd int
	// Supervisor level: the supervisor and the runner died, both pids were
	// taken over, then `stop` and `status` ran.
	RunnerPid        int    `json:"runner_pid"`
	SupervisorPid    int    `json:"supervisor_pid"`
	StopCode         int    `json:"stop_code"`
	StopStderr       string `json:"stop_stderr"`
	StatusJSON       string `json:"status_json"`
	ImpostorsAlive   bool   `json:"impostors_alive"`
	RecordSignalSent bool   `json:"record_signal_sent"`
	RecordState      string `json:"record_state"`
}

// TestPIDReuse runs the helper as PID 1 of a fresh PID namespace, where
// pids are small and ns_last_pid hands a dead process's pid to a new one
// on demand. No signal path of loki may reach the process that took a
// recorded pid over.
func TestPIDReuse(t *testing.T) {
	r := runReuseHelper(t, "pidreuse")
	t.Logf("pid %d reused: victim %s, impostor %s", r.Pid, r.VictimToken, r.ImpostorToken)
	requireNothingReached(t, r)

	// stop finds the supervisor dead and reclaims the run: the runner's
	// pid now names an impostor, so nothing is signalled (checked below),
	// and the record is ended as supervisor_lost.
	if r.StopCode != 0 || r.RecordState != "exited" {
		t.Errorf("stop with both pids reused: exit %d, stderr %q, record %q (want 0 and exited)", r.StopCode, r.StopStderr, r.RecordState)
	}
	requireNoCrash(t, r.StopStderr)
	var view map[string]any
	if err := json.Unmarshal([]byte(r.StatusJSON), &view); err != nil {
		t.Fatalf("status --json %q: %v", r.StatusJSON, err)
	}
	if view["display_state"] != "exited (supervisor_lost)" {
		t.Errorf("status with the supervisor's pid reused: alive %v, display %v", view["supervisor_alive"], view["display_state"])
	}
	if r.RecordSignalSent {
		t.Error("the record claims a stop signal was sent")
	}
	if !r.ImpostorsAlive {
		t.Error("a process that took the runner's or the supervisor's pid died")
	}
}

func requireNothingReached(t *testing.T, r reuseReport) {
	t.Helper()
	if r.GroupSignalErr != procid.ErrGroupRefused.Error() {
		t.Errorf("procid.Group.Signal on the reused pid: %q, want the refusal", r.GroupSignalErr)
	}
	if r.LineageSent {
		t.Error("lineage.Signal reported a signal sent to the impostor")
	}
	if !r.ImpostorAlive {
		t.Error("the impostor died: a signal reached it")
	}
}

// runReuseHelper runs the helper in role as PID 1 of a fresh PID namespace
// and returns its report.
func runReuseHelper(t *testing.T, role string) reuseReport {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequirePIDNamespace(t)
	data := t.TempDir()
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	cmd.Env = append(baseEnv(data), helperEnv+"="+role, privateEnv+"=1",
		"LOKI_FAULTS_SUP="+testutil.Binary(t, "loki-supervise"), "LOKI_FAULTS_WS="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Past the bound the helper is killed: PID 1 of its namespace, the
	// whole namespace goes.
	w := testutil.Wait(cmd)
	if _, ok := w.Within(2 * wait); !ok {
		t.Fatalf("helper did not finish; stderr %s", errb.String())
	} else if w.Err() != nil {
		t.Fatalf("helper: %v\nstdout %s\nstderr %s", w.Err(), out.String(), errb.String())
	}
	var r reuseReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("helper output %q: %v (stderr %s)", out.String(), err, errb.String())
	}
	if r.Error != "" {
		t.Fatalf("helper: %s", r.Error)
	}
	return r
}

// pidReuseHelper is PID 1 of a fresh PID namespace. It prints one
// reuseReport and kills everything it started (its exit ends the
// namespace anyway).
func pidReuseHelper(sameTick bool) int {
	var r reuseReport
	if err := pidReuse(&r, sameTick); err != nil {
		r.Error = err.Error()
	}
	b, _ := json.Marshal(r)
	os.Stdout.Write(b)
	return 0
}

func pidReuse(r *reuseReport, sameTick bool) error {
	if os.Getpid() != 1 {
		return errors.New("helper is not PID 1")
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if sameTick {
		return groupReuse(r, true)
	}
	if err := groupReuse(r, false); err != nil {
		return err
	}
	return supervisorReuse(r)
}

// groupReuse records a session leader's identity as the supervisor does,
// kills it, hands its pid to a new session leader and tries every
// identity-checked signal path on the old record. With sameTick the pid is
// handed over at once (up to a few tries until both starts fall in one
// clock tick); otherwise the impostor is restarted until its token differs.
func groupReuse(r *reuseReport, sameTick bool) error {
	for try := 0; ; try++ {
		impostor, err := reuseOnce(r, !sameTick)
		if err != nil {
			return err
		}
		if r.SameTickTokenSeen == sameTick || try == 20 {
			defer stopSleeper(impostor)
			if sameTick {
				return signalImpostorLive(r, impostor)
			}
			return signalImpostor(r, impostor)
		}
		unix.Close(r.pidfd)
		stopSleeper(impostor)
	}
}

// reuseOnce starts a victim session leader, records it, kills it and
// starts an impostor session leader on its pid. With distinct, the
// impostor starts two clock ticks (at 100 Hz) later, so its birth token
// differs: the case a restored token can tell apart.
func reuseOnce(r *reuseReport, distinct bool) (*exec.Cmd, error) {
	victim, err := startSleeper(0, true)
	if err != nil {
		return nil, err
	}
	r.Pid = victim.Process.Pid
	r.VictimToken, err = procid.BirthToken(r.Pid)
	if err != nil {
		stopSleeper(victim)
		return nil, err
	}
	g := procid.Group{PID: r.Pid, PGID: r.Pid, SID: r.Pid, Token: r.VictimToken}
	if err := g.Verify(); err != nil {
		stopSleeper(victim)
		return nil, fmt.Errorf("the live victim does not verify (test is blind): %w", err)
	}
	if r.live, err = procid.Capture(r.Pid); err != nil {
		stopSleeper(victim)
		return nil, err
	}
	if r.pidfd, err = unix.PidfdOpen(r.Pid, 0); err != nil {
		stopSleeper(victim)
		return nil, fmt.Errorf("pidfd_open: %w", err)
	}
	stopSleeper(victim)
	if distinct {
		time.Sleep(20 * time.Millisecond)
	}
	impostor, err := startSleeper(r.Pid, true)
	if err != nil {
		return nil, err
	}
	r.ImpostorToken, _ = procid.BirthToken(r.Pid)
	r.SameTickTokenSeen = r.ImpostorToken == r.VictimToken
	return impostor, nil
}

// signalImpostorLive tries the signal paths a live supervisor uses for a
// runner it started (its own reap of the leader, an identity captured alive)
// after the pid was reused within one clock tick; the impostor must live.
func signalImpostorLive(r *reuseReport, impostor *exec.Cmd) error {
	defer unix.Close(r.pidfd)
	// The supervisor reaped its runner itself, so its hold says so.
	reaped := func() (func(), bool) { return func() {}, false }
	g := procid.Group{PID: r.Pid, PGID: r.Pid, SID: r.Pid, Token: r.VictimToken, Hold: reaped}
	if err := g.Signal(syscall.SIGTERM); err != nil {
		r.GroupSignalErr = err.Error()
	}
	r.LineageSent = lineage.Signal(r.live, unix.SIGKILL)
	r.ImpostorAlive = survives(impostor)
	return nil
}

// signalImpostor tries the identity-checked signal paths on the victim's
// record; the impostor must survive them all.
func signalImpostor(r *reuseReport, impostor *exec.Cmd) error {
	unix.Close(r.pidfd)
	g := procid.Group{PID: r.Pid, PGID: r.Pid, SID: r.Pid, Token: r.VictimToken}
	ident, err := procid.Restore(r.Pid, r.VictimToken)
	if err != nil {
		return err
	}
	if err := g.Signal(syscall.SIGTERM); err != nil {
		r.GroupSignalErr = err.Error()
	}
	r.LineageSent = lineage.Signal(ident, unix.SIGKILL)
	r.ImpostorAlive = survives(impostor)
	return nil
}

// supervisorReuse: a real `run` whose supervisor and runner are killed and
// whose pids are then taken over, followed by `stop` and `status`.
func supervisorReuse(r *reuseReport) error {
	sup := os.Getenv("LOKI_FAULTS_SUP")
	id := "f0000000-0000-4000-8000-0000000000a1"
	data := os.Getenv("LOKI_DATA_DIR")
	s := exec.Command(sup, "run", "--execution-id", id, "--workspace", os.Getenv("LOKI_FAULTS_WS"), "--", "/bin/sleep", "120")
	if err := s.Start(); err != nil {
		return err
	}
	store := state.NewStore(filepath.Join(data, "dashboard", "builds"))
	var st state.State
	deadline := time.Now().Add(wait)
	for {
		cur, err := store.Read(state.MustParseID(id))
		if err == nil && cur.Str("state") == "running" {
			st = cur
			break
		}
		if time.Now().After(deadline) {
			s.Process.Kill()
			return fmt.Errorf("run never recorded running: %v %v", cur, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.RunnerPid, _ = st.Int("runner_pid")
	r.SupervisorPid = s.Process.Pid
	s.Process.Kill()
	s.Wait()
	syscall.Kill(r.RunnerPid, syscall.SIGKILL)
	reapAll(r.RunnerPid) // the orphaned runner is this PID 1's child now
	runnerImp, err := startSleeper(r.RunnerPid, true)
	if err != nil {
		return fmt.Errorf("runner pid: %w", err)
	}
	defer stopSleeper(runnerImp)
	supImp, err := startSleeper(r.SupervisorPid, false)
	if err != nil {
		return fmt.Errorf("supervisor pid: %w", err)
	}
	defer stopSleeper(supImp)

	var errb bytes.Buffer
	stop := exec.Command(sup, "stop", id)
	stop.Stderr = &errb
	err = stop.Run()
	r.StopCode = stop.ProcessState.ExitCode()
	r.StopStderr = errb.String()
	if err != nil && r.StopCode < 0 {
		return err
	}
	out, _ := exec.Command(sup, "status", id, "--json").Output()
	r.StatusJSON = string(out)
	if cur, err := store.Read(state.MustParseID(id)); err == nil {
		_, r.RecordSignalSent = cur["stop_signal_sent_at"]
		r.RecordState = cur.Str("state")
	}
	r.ImpostorsAlive = survives(runnerImp) && survives(supImp)
	return nil
}

// startSleeper starts a sleep, as a session leader if setsid. With pid > 0
// it is made to take exactly that pid (ns_last_pid = pid-1 before the
// fork; retried, since the Go runtime may take a pid for a thread).
func startSleeper(pid int, setsid bool) (*exec.Cmd, error) {
	for try := 0; try < 200; try++ {
		if pid > 0 {
			if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); err != nil {
				return nil, fmt.Errorf("ns_last_pid: %w", err)
			}
		}
		cmd := exec.Command("/bin/sleep", "120")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		if pid == 0 || cmd.Process.Pid == pid {
			return cmd, nil
		}
		stopSleeper(cmd)
	}
	return nil, fmt.Errorf("pid %d never came back", pid)
}

func stopSleeper(cmd *exec.Cmd) {
	cmd.Process.Kill()
	if cmd.ProcessState == nil {
		cmd.Wait()
	}
}

// survivalWindow is how long a sleeper must stay alive after the signal
// paths ran: a delivered SIGTERM/SIGKILL ends it in microseconds, so a
// second under any load is a wide margin, and there is no event to await
// for a signal that must never come.
const survivalWindow = time.Second

// survives reports whether cmd (a sleeper of ours) is still running after
// survivalWindow; waiting on it is the exact test of its death.
func survives(cmd *exec.Cmd) bool {
	if !alive(cmd.Process.Pid) {
		return false
	}
	var ws unix.WaitStatus
	deadline := time.Now().Add(survivalWindow)
	for time.Now().Before(deadline) {
		if got, _ := unix.Wait4(cmd.Process.Pid, &ws, unix.WNOHANG, nil); got == cmd.Process.Pid {
			cmd.ProcessState = &os.ProcessState{}
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// alive: the process exists, is not a zombie and was not waited for.
func alive(pid int) bool {
	st, err := procid.Stat(pid)
	return err == nil && st.State != 'Z' && st.State != 'X'
}

// reapAll waits for pid (an orphan this PID 1 inherited), bounded.
func reapAll(pid int) {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		var ws unix.WaitStatus
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if got == pid || err != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRecordRedirectedToAnotherLiveGroup: the record is rewritten to name
// another live session leader consistently (its real pid, pgid, sid and
// birth token), as if the runner's pid had been taken over. The live
// supervisor must still refuse to signal it, because the record no longer
// names the process it spawned.
func TestRecordRedirectedToAnotherLiveGroup(t *testing.T) {
	testutil.RequireRoot(t)
	data := t.TempDir()
	id := "f0000000-0000-4000-8000-0000000000b1"
	sup := exec.Command(testutil.Binary(t, "loki-supervise"), "run", "--execution-id", id, "--workspace", t.TempDir(), "--", "/bin/sleep", "120")
	sup.Env = baseEnv(data)
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	w := testutil.Wait(sup)
	st := waitRecord(t, data, id, "running", func(st state.State) bool { return st.Str("state") == "running" })
	runner, _ := st.Int("runner_pid")
	runnerGroup := procid.Group{PID: runner, PGID: runner, SID: runner, Token: st.Str("runner_birth_token")}
	t.Cleanup(func() {
		runnerGroup.Signal(syscall.SIGKILL) // the runner this test started, if it is still that one
		w.Within(wait)
	})
	impostor, err := startSleeper(0, true)
	if err != nil {
		t.Fatal(err)
	}
	defer stopSleeper(impostor)
	ip := impostor.Process.Pid
	tok, err := procid.BirthToken(ip)
	if err != nil {
		t.Fatal(err)
	}
	if err := (procid.Group{PID: ip, PGID: ip, SID: ip, Token: tok}).Verify(); err != nil {
		t.Fatalf("the impostor does not verify on its own (test is blind): %v", err)
	}
	store := state.NewStore(filepath.Join(data, "dashboard", "builds"))
	if _, err := store.Update(state.MustParseID(id), map[string]any{"runner_pid": ip, "runner_pgid": ip, "runner_sid": ip, "runner_birth_token": tok}); err != nil {
		t.Fatal(err)
	}
	if o := cli(t, baseEnv(data), "stop", id); o.code != 0 {
		t.Fatalf("stop: exit %d, stderr %q", o.code, o.stderr)
	}
	st = waitRecord(t, data, id, "stop_error", func(st state.State) bool { return st.Str("stop_error") != "" })
	if got := st.Str("stop_error"); got != procid.ErrGroupRefused.Error() {
		t.Fatalf("stop_error %q", got)
	}
	if _, sent := st["stop_signal_sent_at"]; sent {
		t.Fatal("the record says a signal was sent")
	}
	if !survives(impostor) {
		t.Fatal("the impostor named by the rewritten record was signalled")
	}
	if err := runnerGroup.Verify(); err != nil {
		t.Fatalf("the real runner was signalled too: %v", err)
	}
}

// TestPIDReuseWithinOneClockTick: birth tokens count clock ticks (10 ms),
// so a process that takes a dead process's pid within the same tick gets
// the very same token. What a live supervisor knows of its runner (that
// it reaped it, an identity captured alive, which carries the pidfs
// inode) still tells them apart: no signal reaches the newcomer. A token
// restored from a record cannot (docs/reliability.md says so).
func TestPIDReuseWithinOneClockTick(t *testing.T) {
	r := runReuseHelper(t, "pidreuse-tick")
	if r.Error != "" {
		t.Fatalf("helper: %s", r.Error)
	}
	if !r.SameTickTokenSeen {
		t.Logf("no reuse within one tick in this run (tokens %s / %s): nothing to prove", r.VictimToken, r.ImpostorToken)
		return
	}
	t.Logf("pid %d reused within one tick: both tokens are %s; group signal: %q", r.Pid, r.VictimToken, r.GroupSignalErr)
	if r.LineageSent {
		t.Error("lineage.Signal with an identity captured alive signalled the impostor")
	}
	if !r.ImpostorAlive {
		t.Error("the impostor died: a signal reached it")
	}
}
