package build

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/testutil"
)

var timestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$`)

func keys(st state.State) []string {
	var k []string
	for key := range st {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

// checkExited checks every field an exited (launched) record carries, for
// a run that bound no proof.
func checkExited(t *testing.T, e *env, id string, st state.State, rc int, reason string, extra ...string) {
	t.Helper()
	checkRecord(t, e, id, st, rc, reason, extra...)
	p := st.Map("proof")
	if p["present"] != false || p["bound"] != false || p["proof_url"] != "/api/control/builds/"+id+"/proof" {
		t.Errorf("proof = %v", jsonOf(p))
	}
}

// checkRecord checks every field of an exited (launched) record but the
// proof, and that the lineage check found nothing.
func checkRecord(t *testing.T, e *env, id string, st state.State, rc int, reason string, extra ...string) {
	t.Helper()
	want := append([]string{"descendants", "execution_id", "exit_code", "exited_at", "final_tree_sha256",
		"finished_at", "proof", "returncode", "run_id", "runner_birth_token", "runner_log", "runner_pgid",
		"runner_pid", "runner_sid", "schema_version", "signal", "started_at", "state",
		"supervisor_birth_token", "supervisor_pid", "termination_reason"}, extra...)
	slices.Sort(want)
	if got := keys(st); !slices.Equal(got, want) {
		t.Errorf("fields\n got %v\nwant %v", got, want)
	}
	if v, _ := st.Int("schema_version"); v != 1 || st.Str("execution_id") != id || st.Str("state") != "exited" {
		t.Errorf("identity fields: %v %v %v", st["schema_version"], st["execution_id"], st["state"])
	}
	if st.Str("termination_reason") != reason {
		t.Errorf("termination_reason = %q, want %q", st.Str("termination_reason"), reason)
	}
	if got, ok := st.Int("returncode"); !ok || got != rc {
		t.Errorf("returncode = %v, want %d", st["returncode"], rc)
	}
	if rc >= 0 {
		if c, ok := st.Int("exit_code"); !ok || c != rc || st["signal"] != nil {
			t.Errorf("exit_code/signal = %v/%v, want %d/null", st["exit_code"], st["signal"], rc)
		}
	} else if s, ok := st.Int("signal"); !ok || s != -rc || st["exit_code"] != nil {
		t.Errorf("exit_code/signal = %v/%v, want null/%d", st["exit_code"], st["signal"], -rc)
	}
	pid, _ := st.Int("runner_pid")
	pgid, _ := st.Int("runner_pgid")
	sid, _ := st.Int("runner_sid")
	if pid <= 1 || pgid != pid || sid != pid {
		t.Errorf("runner ids pid=%d pgid=%d sid=%d", pid, pgid, sid)
	}
	if !procid.SignalSafe(st.Str("runner_birth_token")) || !procid.SignalSafe(st.Str("supervisor_birth_token")) {
		t.Errorf("tokens %q %q are not signal-safe", st.Str("runner_birth_token"), st.Str("supervisor_birth_token"))
	}
	if sp, _ := st.Int("supervisor_pid"); sp <= 1 || sp == pid {
		t.Errorf("supervisor_pid = %d", sp)
	}
	for _, k := range []string{"started_at", "exited_at", "finished_at"} {
		if !timestamp.MatchString(st.Str(k)) {
			t.Errorf("%s = %q is not a reference timestamp", k, st.Str(k))
		}
	}
	if st.Str("exited_at") != st.Str("finished_at") || st.Str("started_at") > st.Str("exited_at") {
		t.Errorf("times: started %s exited %s finished %s", st.Str("started_at"), st.Str("exited_at"), st.Str("finished_at"))
	}
	if st.Str("runner_log") != e.store().Path(state.MustParseID(id), state.LogFile) {
		t.Errorf("runner_log = %q", st.Str("runner_log"))
	}
	d := st.Map("descendants")
	if d["checked"] != true || d["detected"] != false || d["error"] != "" {
		t.Errorf("descendants = %v", jsonOf(d))
	}
	for _, k := range []string{"term_sent", "kill_sent", "remaining_pids"} {
		if l, ok := d[k].([]any); !ok || len(l) != 0 {
			t.Errorf("descendants.%s = %v, want []", k, d[k])
		}
	}
}

func TestBuildExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		script string
		rc     int
		exit   int
		reason string
	}{
		{"crashed", `echo "args: $*"; exit 3`, 3, 3, "crashed"},
		{"exit 0 without a proof is not completed", `exit 0`, 0, 0, "verification_failed"},
		{"exit 20 is verification_failed", `exit 20`, 20, 20, "verification_failed"},
		{"killed by a signal", `kill -KILL $$`, -9, 137, "crashed"},
		{"segfault", `kill -SEGV $$`, -11, 139, "crashed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			id := "0b7c1a8e-4f6d-4d2a-9c3b-5e8f7a6d1c2" + strconv.Itoa(len(tc.name)%10)
			s := e.start(id, e.buildArgs(id, e.runSh(tc.script))...)
			if got := s.exit(t); got != tc.exit {
				t.Fatalf("exit %d, want %d; stderr %s", got, tc.exit, s.stderr.String())
			}
			checkExited(t, e, id, e.record(id), tc.rc, tc.reason)
		})
	}
}

func TestBuildRunnerArguments(t *testing.T) {
	e := newEnv(t)
	id := "11111111-2222-4333-8444-555555555555"
	s := e.start(id, e.buildArgs(id, e.runSh(`printf '%s|' "$@"; pwd`), "--parallel")...)
	if got := s.exit(t); got != 0 {
		t.Fatalf("exit %d: %s", got, s.stderr.String())
	}
	spec, _ := filepath.EvalSymlinks(e.spec)
	ws, _ := filepath.EvalSymlinks(e.workspace)
	want := "--provider|claude|--parallel|" + spec + "|" + ws + "\n"
	if got := e.log(id); got != want {
		t.Errorf("runner saw %q, want %q", got, want)
	}
	// The spec is snapshotted into the record.
	if b, err := os.ReadFile(e.store().Path(state.MustParseID(id), state.SpecFile)); err != nil || string(b) != "# build the thing\n" {
		t.Errorf("spec.md = %q, %v", b, err)
	}
}

func TestBuildLaunchFailed(t *testing.T) {
	e := newEnv(t)
	id := "22222222-2222-4333-8444-555555555555"
	runSh := e.runSh("exit 0")
	os.Chmod(runSh, 0o600) // exists, not executable
	s := e.start(id, e.buildArgs(id, runSh)...)
	if got := s.exit(t); got != 127 {
		t.Fatalf("exit %d, want 127; stderr %s", got, s.stderr.String())
	}
	st := e.record(id)
	want := []string{"execution_id", "exit_code", "exited_at", "finished_at", "launch_error", "proof", "returncode",
		"schema_version", "signal", "state", "supervisor_birth_token", "supervisor_pid", "termination_reason"}
	if got := keys(st); !slices.Equal(got, want) {
		t.Errorf("fields\n got %v\nwant %v", got, want)
	}
	if st.Str("termination_reason") != "launch_failed" || st.Str("state") != "exited" || st.Str("launch_error") == "" {
		t.Errorf("record %v", st)
	}
	for _, k := range []string{"returncode", "exit_code", "signal"} {
		if v, present := st[k]; !present || v != nil {
			t.Errorf("%s = %v, want null", k, v)
		}
	}
	if p := st.Map("proof"); p["present"] != false || p["bound"] != false {
		t.Errorf("proof %v", jsonOf(p))
	}
}

func TestStopFromAnotherProcess(t *testing.T) {
	e := newEnv(t)
	id := "33333333-2222-4333-8444-555555555555"
	s := e.start(id, e.buildArgs(id, e.runSh(`echo up; exec sleep 60`))...)
	e.waitFor(id, "running", running)
	e.waitLog(id, "up")
	out, errOut, code := e.cli("stop", id)
	if code != 0 || !strings.Contains(out, "stop requested for "+id) || errOut != "" {
		t.Fatalf("stop: %d %q %q", code, out, errOut)
	}
	// A second request is idempotent.
	if out, _, code := e.cli("stop", id); code != 0 || !strings.Contains(out, "already requested") {
		t.Errorf("second stop: %d %q", code, out)
	}
	if got := s.exit(t); got != 128+15 {
		t.Fatalf("exit %d, want 143", got)
	}
	st := e.record(id)
	checkExited(t, e, id, st, -15, "stopped", "stop_requested_at", "stop_signal_sent_at")
	if st.Str("stop_signal_sent_at") < st.Str("stop_requested_at") {
		t.Errorf("signal sent %s before request %s", st.Str("stop_signal_sent_at"), st.Str("stop_requested_at"))
	}
	// Stopping an exited execution is refused clearly.
	if _, errOut, code := e.cli("stop", id); code != 1 || !strings.Contains(errOut, "already exited") {
		t.Errorf("stop after exit: %d %q", code, errOut)
	}
}

func TestStopEscalatesToKill(t *testing.T) {
	e := newEnv(t)
	e.vars = append(e.vars, "LOKI_BUILD_STOP_GRACE_SECONDS=0.5")
	id := "44444444-2222-4333-8444-555555555555"
	// The runner ignores SIGTERM; so does its child.
	s := e.start(id, e.buildArgs(id, e.runSh(`trap '' TERM; echo up; exec sleep 60`))...)
	e.waitLog(id, "up")
	e.cli("stop", id)
	if got := s.exit(t); got != 128+9 {
		t.Fatalf("exit %d, want 137", got)
	}
	st := e.record(id)
	checkExited(t, e, id, st, -9, "stopped", "stop_requested_at", "stop_signal_sent_at")
}

func TestSupervisorSignalStops(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			e := newEnv(t)
			id := "55555555-2222-4333-8444-55555555555" + strconv.Itoa(int(sig)%10)
			s := e.start(id, e.buildArgs(id, e.runSh(`echo up; exec sleep 60`))...)
			e.waitLog(id, "up")
			s.cmd.Process.Signal(sig)
			if got := s.exit(t); got != 143 {
				t.Fatalf("exit %d, want 143 (runner got SIGTERM)", got)
			}
			checkExited(t, e, id, e.record(id), -15, "stopped", "stop_signal_sent_at")
		})
	}
}

func TestIdentityChangeRefusesSignal(t *testing.T) {
	e := newEnv(t)
	id := "66666666-2222-4333-8444-555555555555"
	s := e.start(id, e.buildArgs(id, e.runSh(`echo up; exec sleep 60`))...)
	e.waitLog(id, "up")
	st := e.waitFor(id, "running", running)
	pid, _ := st.Int("runner_pid")
	// Fake a changed identity: the record now names another birth.
	_, err := e.store().Update(state.MustParseID(id), map[string]any{"runner_birth_token": st.Str("runner_birth_token") + "7"})
	if err != nil {
		t.Fatal(err)
	}
	e.cli("stop", id)
	st = e.waitFor(id, "stop_error", func(st state.State) bool { return st.Str("stop_error") != "" })
	if got := st.Str("stop_error"); got != "Runner group identity changed or is imprecise; signal refused" {
		t.Fatalf("stop_error = %q", got)
	}
	if _, sent := st["stop_signal_sent_at"]; sent {
		t.Fatal("a signal was recorded as sent")
	}
	// The runner is untouched: it still runs, as the same process.
	tok, _ := procid.BirthToken(pid)
	if id2, err := procid.Restore(pid, tok); err != nil || !id2.Matches() {
		t.Fatal("runner was signalled despite the refusal")
	}
	time.Sleep(300 * time.Millisecond) // several polls: no later retry either
	if id2, _ := procid.Restore(pid, tok); !id2.Matches() {
		t.Fatal("runner died after a refused stop")
	}
	// End it ourselves (this test started it).
	syscall.Kill(-pid, syscall.SIGKILL)
	if got := s.exit(t); got != 137 {
		t.Fatalf("exit %d", got)
	}
	st = e.record(id)
	if st.Str("termination_reason") != "crashed" || st.Str("stop_error") == "" {
		t.Errorf("final record: reason %q stop_error %q", st.Str("termination_reason"), st.Str("stop_error"))
	}
}

func TestSecretsNeverReachRunner(t *testing.T) {
	e := newEnv(t)
	e.vars = append(e.vars, "ANTHROPIC_API_KEY=sk-ant-SECRET1", "GITHUB_TOKEN=ghp_SECRET2",
		"LOKI_CODEX_MODEL=gpt-test", "LOKI_HOST_CHILD_PATH=/usr/bin:/bin", "TMPDIR=/SECRET3")
	id := "77777777-2222-4333-8444-555555555555"
	s := e.start(id, e.buildArgs(id, e.runSh(`env`))...)
	if got := s.exit(t); got != 0 {
		t.Fatalf("exit %d", got)
	}
	log := e.log(id)
	raw, _ := os.ReadFile(e.store().Path(state.MustParseID(id), state.StateFile))
	for _, secret := range []string{"SECRET1", "SECRET2", "SECRET3"} {
		for where, text := range map[string]string{"runner env": log, "state.json": string(raw), "stderr": s.stderr.String()} {
			if strings.Contains(text, secret) {
				t.Errorf("%s leaked into %s", secret, where)
			}
		}
	}
	lokiDir, _ := filepath.EvalSymlinks(e.lokiDir)
	for _, want := range []string{"LOKI_CODEX_MODEL=gpt-test", "PATH=/usr/bin:/bin", "LOKI_SUPERVISED_BUILD=1",
		"TMPDIR=" + lokiDir + "/host-runtime/tmp", "GIT_CONFIG_NOSYSTEM=1", "DISABLE_TELEMETRY=1"} {
		if !strings.Contains(log, want+"\n") {
			t.Errorf("runner env lacks %s", want)
		}
	}
}

func TestSupervisorDiedStatus(t *testing.T) {
	e := newEnv(t)
	id := "88888888-2222-4333-8444-555555555555"
	s := e.start(id, e.buildArgs(id, e.runSh(`echo up; exec sleep 60`))...)
	e.waitLog(id, "up")
	e.waitFor(id, "running", running)
	s.cmd.Process.Kill()
	s.exit(t)
	// The runner dies with its supervisor (parent death signal), so the
	// record, still "running", reads as lost: a terminal state.
	const lost = "lost (supervisor lost, runner gone; stop kills what is left)"
	if pid, _ := e.record(id).Int("runner_pid"); !testutil.WaitUntil(30*time.Second, func() bool {
		id, err := procid.Restore(pid, e.record(id).Str("runner_birth_token"))
		return err != nil || !id.Matches()
	}) {
		t.Fatalf("runner %d outlived its supervisor", pid)
	}
	out, _, code := e.cli("status", id)
	if code != 0 || !strings.Contains(out, lost) {
		t.Errorf("status: %d %q", code, out)
	}
	out, _, _ = e.cli("status", id, "--json")
	st, err := state.Decode([]byte(out))
	if err != nil || st["supervisor_alive"] != false || st.Str("display_state") != lost {
		t.Errorf("status --json: %v %q", err, out)
	}
	if out, _, code := e.cli("list"); code != 0 || !strings.Contains(out, id) || !strings.Contains(out, lost) {
		t.Errorf("list: %d %q", code, out)
	}
	// The reader did not write the derived fields into the record.
	if rec := e.record(id); rec["supervisor_alive"] != nil || rec["display_state"] != nil {
		t.Error("status wrote derived fields into state.json")
	}
	// stop reclaims the run: nothing is left to act on the request.
	out, _, code = e.cli("stop", id)
	if code != 0 || !strings.Contains(out, "recorded as exited (supervisor_lost)") {
		t.Errorf("stop with a lost supervisor: %d %q", code, out)
	}
	if rec := e.record(id); rec.Str("state") != "exited" || rec.Str("termination_reason") != "supervisor_lost" {
		t.Errorf("record after stop: %v", rec)
	}
}

func TestRunIDBaseline(t *testing.T) {
	e := newEnv(t)
	runID := filepath.Join(e.lokiDir, "state", "trust-run-id")
	os.WriteFile(runID, []byte("run-old\n"), 0o600)
	// Unchanged brownfield value: never binds.
	id := "99999999-2222-4333-8444-555555555555"
	if got := e.start(id, e.buildArgs(id, e.runSh(`exit 0`))...).exit(t); got != 0 {
		t.Fatal(got)
	}
	if st := e.record(id); st.Str("run_id") != "" {
		t.Errorf("baseline run id bound: %q", st.Str("run_id"))
	}
	// A value minted during the run is picked up.
	id2 := "99999999-2222-4333-8444-555555555556"
	script := `printf 'run-new-1\n' > "$LOKI_DIR/state/trust-run-id"; sleep 0.5; exit 0`
	if got := e.start(id2, e.buildArgs(id2, e.runSh(script))...).exit(t); got != 0 {
		t.Fatal(got)
	}
	st := e.record(id2)
	if st.Str("run_id") != "run-new-1" || st.Str("termination_reason") != "verification_failed" {
		t.Errorf("run_id %q reason %q", st.Str("run_id"), st.Str("termination_reason"))
	}
	// A malformed value is ignored.
	id3 := "99999999-2222-4333-8444-555555555557"
	script = `printf 'run-../x\n' > "$LOKI_DIR/state/trust-run-id"`
	e.start(id3, e.buildArgs(id3, e.runSh(script))...).exit(t)
	if st := e.record(id3); st.Str("run_id") != "" {
		t.Errorf("malformed run id bound: %q", st.Str("run_id"))
	}
}

func TestInvalidArguments(t *testing.T) {
	e := newEnv(t)
	good := "aaaaaaaa-2222-4333-8444-555555555555"
	runSh := e.runSh("exit 0")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad uuid", e.buildArgs("not-a-uuid", runSh), "execution id must be a valid UUID"},
		{"traversal uuid", e.buildArgs("../../../tmp/x", runSh), "execution id must be a valid UUID"},
		{"missing run.sh", e.buildArgs(good, "/nonexistent/run.sh"), "--run-sh: invalid path: /nonexistent/run.sh does not exist"},
		{"run.sh is a dir", e.buildArgs(good, e.workspace), "is not a regular file"},
		{"workspace missing", append(e.buildArgs(good, runSh), "--workspace", "/nonexistent"), "--workspace: invalid path"},
		{"missing flag", []string{"build", "--execution-id", good}, "Required flag"},
		{"status bad id", []string{"status", "xyz"}, `"xyz": execution id must be a valid UUID`},
		{"stop bad id", []string{"stop", "1234"}, "execution id must be a valid UUID"},
		{"run no command", []string{"run", "--workspace", e.workspace}, "no command given"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := e.cli(tc.args...)
			if code == 0 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 && !strings.Contains(tc.want, "Required") {
				t.Errorf("exit %d, stderr %q; want a failure mentioning %q", code, errOut, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(e.data, "dashboard", "builds", good)); err == nil {
		t.Error("a refused build created a record")
	}
	for _, args := range [][]string{{"status", good}, {"stop", good}, {"logs", good}} {
		if _, errOut, code := e.cli(args...); code != 1 || !strings.Contains(errOut, "no such execution: "+good) {
			t.Errorf("%v: %d %q", args, code, errOut)
		}
	}
}

func TestRecordPermissions(t *testing.T) {
	e := newEnv(t)
	id := "bbbbbbbb-2222-4333-8444-555555555555"
	e.start(id, e.buildArgs(id, e.runSh("echo hi"))...).exit(t)
	dir := e.store().Path(state.MustParseID(id), "")
	for path, want := range map[string]os.FileMode{
		e.data:                             0o700,
		filepath.Join(e.data, "dashboard"): 0o700,
		filepath.Join(e.data, "dashboard", "builds"): 0o700,
		dir:                                                   0o700,
		filepath.Join(dir, "state.json"):                      0o600,
		filepath.Join(dir, "runner.log"):                      0o600,
		filepath.Join(dir, "spec.md"):                         0o600,
		filepath.Join(dir, ".lock"):                           0o600,
		filepath.Join(e.lokiDir, "host-runtime"):              0o700,
		filepath.Join(e.lokiDir, "host-runtime", "tmp"):       0o700,
		filepath.Join(e.lokiDir, "host-runtime", "gitconfig"): 0o600,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
}

func TestDeadlines(t *testing.T) {
	tests := []struct {
		name, flag, script, reason string
	}{
		{"hard", "--hard-timeout", `while :; do echo tick; sleep 0.1; done`, "hard_timeout"},
		{"idle", "--idle-timeout", `echo once; while :; do sleep 0.1; done`, "idle_timeout"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			id := "cccccccc-2222-4333-8444-55555555555" + strconv.Itoa(i)
			start := time.Now()
			s := e.start(id, e.buildArgs(id, e.runSh(tc.script), tc.flag, "1")...)
			if got := s.exit(t); got != 143 {
				t.Fatalf("exit %d", got)
			}
			if time.Since(start) < time.Second {
				t.Errorf("stopped after %v, before the 1s deadline", time.Since(start))
			}
			st := e.record(id)
			checkExited(t, e, id, st, -15, "stopped", "deadline_at", "deadline_reason", "stop_signal_sent_at")
			if st.Str("deadline_reason") != tc.reason {
				t.Errorf("deadline_reason = %q", st.Str("deadline_reason"))
			}
		})
	}
}

func TestDescendantsTerminated(t *testing.T) {
	e := newEnv(t)
	id := "dddddddd-2222-4333-8444-555555555555"
	// The runner leaves a detached grandchild behind and exits 0.
	s := e.start(id, e.buildArgs(id, e.runSh(`(setsid sleep 60 &) ; sleep 0.3; exit 0`))...)
	if got := s.exit(t); got != 0 {
		t.Fatalf("exit %d", got)
	}
	st := e.record(id)
	d := st.Map("descendants")
	if st.Str("termination_reason") != "descendants_terminated" || d["detected"] != true || d["quiescent"] != true {
		t.Fatalf("reason %q descendants %v", st.Str("termination_reason"), jsonOf(d))
	}
	if p := st.Map("proof"); p["bound"] != false || st.Str("run_id") != "" {
		t.Errorf("proof bound despite descendants: %v", jsonOf(p))
	}
}
