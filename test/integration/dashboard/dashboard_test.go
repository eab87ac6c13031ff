package dashboard

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/execution/sandbox/boundary/boundarytest"
	"github.com/loki-sh/loki/internal/execution/sandbox/provider"
	"github.com/loki-sh/loki/internal/testutil"
)

// wait bounds every command of these tests (the machine may be loaded).
const wait = 60 * time.Second

// site is one dashboard installation: a valid host boundary, an engine
// whose run.sh records how it was called, a git workspace, and one data
// dir for loki and one for the reference.
type site struct {
	t                                   *testing.T
	bin, binDir                         string
	root, protected, wsRoot, workspace  string
	lokiDir, spec, runSh, out           string
	dataLoki, dataRef                   string
	boundary                            map[string]string
	runtimeRead, runtimeWrite, childPth string
}

func newSite(t *testing.T) *site {
	t.Helper()
	l := boundarytest.New(t, "")
	root := l.Root
	s := &site{
		t: t, bin: testutil.Binary(t, "loki-supervise"), binDir: filepath.Join(root, "bin"), root: root,
		protected: l.Protected, wsRoot: l.WSRoot, workspace: l.Workspace, spec: l.Spec, runSh: l.RunSh, out: l.Out,
		dataLoki: filepath.Join(root, "data-loki"),
		dataRef:  filepath.Join(root, "data-ref"),
	}
	s.lokiDir = filepath.Join(s.workspace, ".loki")
	for _, d := range []string{s.lokiDir, s.binDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	git := testutil.RequireCommand(t, "git")
	if out, err := exec.Command(git, "-C", s.workspace, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.WriteFile(s.spec, []byte("# build the thing\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The runner records its argv and what its stdin is, outside the
	// workspace (so both supervisors digest the same tree), and exits 3.
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$0\" \"$@\" > %[1]s/args\nreadlink /proc/self/fd/0 > %[1]s/stdin\nexit 3\n", s.out)
	if err := os.WriteFile(s.runSh, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"loki-build-supervisor", "build_supervisor.py"} {
		if err := os.Symlink(s.bin, filepath.Join(s.binDir, name)); err != nil {
			t.Fatal(err)
		}
	}
	s.runtimeRead, s.runtimeWrite, s.childPth = l.RT, l.Out, boundarytest.ChildPath
	l.Env["LOKI_HOST_RESERVED_PORTS"] = "8080,9090"
	delete(l.Env, "HOME") // HOME stays the test's own, for both supervisors
	s.boundary = l.Env
	return s
}

// env is the supervisor's environment with data dir data; extra wins.
func (s *site) env(data string, extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOKI_") && !strings.HasPrefix(kv, "PYTHON") {
			out = append(out, kv)
		}
	}
	for k, v := range s.boundary {
		out = append(out, k+"="+v)
	}
	out = append(out, "LOKI_DATA_DIR="+data, "LOKI_TEST_SUPERVISE="+s.bin,
		"LOKI_BUILD_SUPERVISOR_POLL_SECONDS=0.05", "LOKI_BUILD_DESCENDANT_GRACE_SECONDS=0.5")
	return append(out, extra...)
}

// run runs a command to completion (bounded) and returns its output.
func run(t *testing.T, cmd *exec.Cmd) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code = testutil.WaitExit(t, cmd, wait)
	return o.String(), e.String(), code
}

func (s *site) loki(env []string, args ...string) (string, string, int) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Env = env
	return run(s.t, cmd)
}

// sameJSON fails unless a and b decode to equal values.
func sameJSON(t *testing.T, what string, a, b []byte) {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: loki printed %q: %v", what, a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: reference gave %q: %v", what, b, err)
	}
	if !reflect.DeepEqual(va, vb) {
		t.Errorf("%s:\n loki      %s\n reference %s", what, bytes.TrimSpace(a), bytes.TrimSpace(b))
	}
}

const execID = "0f3c6d52-3a4b-4c8e-9d2f-6a7b8c9d0e1f"

// TestDashboardCallSequence is the dashboard's sequence: check the host
// boundary and the provider, create the record, start the supervisor with
// the reference's argv, then check the recorded processes and write into
// the record, each step through loki's command and, where it can run,
// through the reference function with the same inputs.
func TestDashboardCallSequence(t *testing.T) {
	s := newSite(t)
	ref := newReference(t)
	envL, envR := s.env(s.dataLoki), s.env(s.dataRef)

	t.Run("host_confinement_identity", func(t *testing.T) {
		out, stderr, code := s.loki(envL, "identity", "--workspace-root", s.wsRoot, "--run-sh", s.runSh, "--json")
		if code != 0 {
			t.Fatalf("identity: exit %d: %s", code, stderr)
		}
		// The child path resolved and de-duplicated (/bin is often a link
		// to /usr/bin).
		var child []string
		for _, p := range strings.Split(s.childPth, ":") {
			if r, err := filepath.EvalSymlinks(p); err == nil && !slices.Contains(child, r) {
				child = append(child, r)
			}
		}
		payload, _ := json.Marshal(map[string]any{
			"workspace_roots": []string{s.wsRoot}, "protected_root": s.protected,
			"runtime_read_paths": []string{s.runtimeRead}, "runtime_write_paths": []string{s.runtimeWrite},
			"child_path": child, "reserved_ports": []int{8080, 9090},
		})
		sum := sha256.Sum256(payload)
		want, _ := json.Marshal(map[string]string{
			"workspace_root": s.wsRoot, "protected_root": s.protected, "runtime_read_paths": s.runtimeRead,
			"runtime_write_paths": s.runtimeWrite, "child_path": strings.Join(child, ":"), "reserved_ports": "8080,9090",
			"config_sha256": hex.EncodeToString(sum[:]),
		})
		sameJSON(t, "identity vs computed", []byte(out), want)
		if ref != nil {
			v, raised := ref.call(t, envR, "ref.host_confinement_identity(Path(a[0]), Path(a[1]))", s.wsRoot, s.runSh)
			if raised != "" {
				t.Fatalf("reference raised %s", raised)
			}
			sameJSON(t, "identity vs reference", []byte(out), v)
		}
		// A workspace root that is not an entry: both refuse (2 / ValueError).
		if _, _, code := s.loki(envL, "identity", "--workspace-root", s.protected, "--run-sh", s.runSh, "--json"); code != 2 {
			t.Errorf("identity of a non-root: exit %d, want 2", code)
		}
		if ref != nil {
			if _, raised := ref.call(t, envR, "ref.host_confinement_identity(Path(a[0]), Path(a[1]))", s.protected, s.runSh); raised != "ValueError" {
				t.Errorf("reference identity of a non-root raised %q", raised)
			}
		}
	})

	t.Run("confined_provider_auth_status", func(t *testing.T) {
		for _, seatbelt := range []string{"0", "1"} {
			for _, p := range []string{"claude", "codex", "aider", "other"} {
				extra := "LOKI_HOST_SEATBELT=" + seatbelt
				out, stderr, code := s.loki(s.env(s.dataLoki, extra), "auth-status", "--provider", p,
					"--workspace", s.workspace, "--run-sh", s.runSh, "--spec", s.spec, "--json")
				// Computed: off means available without a probe; on, on
				// Linux, nothing can be confined, for the reason the
				// provider's probes reach first.
				class := map[string]string{"claude": "provider_auth_confinement_unavailable",
					"codex": "provider_readiness_probe_unsupported", "aider": "provider_auth_probe_unsupported",
					"other": "provider_auth_probe_unsupported"}[p]
				available := seatbelt == "0"
				if available {
					class = "seatbelt_not_enabled"
				}
				want, _ := json.Marshal(map[string]any{"provider": p, "available": available,
					"classification": class, "action": provider.Action(p)})
				sameJSON(t, p+" seatbelt="+seatbelt+" vs computed", []byte(out), want)
				if wantCode := map[bool]int{true: 0, false: 1}[available]; code != wantCode {
					t.Errorf("%s seatbelt=%s: exit %d, want %d (%s)", p, seatbelt, code, wantCode, stderr)
				}
				if ref != nil {
					v, raised := ref.call(t, s.env(s.dataRef, extra),
						"ref.confined_provider_auth_status(a[0], Path(a[1]), Path(a[2]), Path(a[3]))",
						p, s.workspace, s.runSh, s.spec)
					if raised != "" {
						t.Fatalf("reference raised %s", raised)
					}
					sameJSON(t, p+" seatbelt="+seatbelt+" vs reference", []byte(out), v)
				}
			}
		}
	})

	// The dashboard creates the record before it starts the supervisor.
	queued := map[string]any{"state": "queued", "provider": "claude", "spec_sha256": strings.Repeat("ab", 32),
		"request": map[string]any{"by": "dashboard", "attempt": 1, "weight": 0.5, "tags": []any{"é", nil, true}}}
	t.Run("update_state create", func(t *testing.T) {
		fields, _ := json.Marshal(queued)
		out, stderr, code := s.loki(envL, "update-state", execID, string(fields), "--json")
		if code != 0 {
			t.Fatalf("update-state: exit %d: %s", code, stderr)
		}
		want := map[string]any{"schema_version": 1, "execution_id": execID}
		for k, v := range queued {
			want[k] = v
		}
		wantJSON, _ := json.Marshal(want)
		sameJSON(t, "created record vs computed", []byte(out), wantJSON)
		dir := filepath.Join(s.dataLoki, "dashboard", "builds", execID)
		checkPrivate(t, dir)
		if ref != nil {
			v, raised := ref.call(t, envR, "ref.update_state(a[0], **a[1])", execID, queued)
			if raised != "" {
				t.Fatalf("reference raised %s", raised)
			}
			sameJSON(t, "created record vs reference", []byte(out), v)
			sameFile(t, filepath.Join(dir, "state.json"), filepath.Join(s.dataRef, "dashboard", "builds", execID, "state.json"))
		}
	})

	// The supervisor, started with the reference's argv (abbreviated, as a
	// dashboard may have written it), stdin a pipe from the dashboard.
	argv := []string{"--exec", execID, "--run-sh", s.runSh, "--work=" + s.workspace, "--loki-dir", s.lokiDir,
		"--spec", s.spec, "--prov", "claude", "--parallel"}
	var recL map[string]any
	t.Run("run_supervisor", func(t *testing.T) {
		cmd := exec.Command(filepath.Join(s.binDir, "loki-build-supervisor"), argv...)
		cmd.Env = envL
		stdinL := pipeStdin(t, cmd)
		_, stderr, code := run(t, cmd)
		stdinL.Close()
		if code != 3 {
			t.Fatalf("loki: exit %d, want the runner's 3: %s", code, stderr)
		}
		argsL, stdinSeenL := s.runnerSaw(t)
		recL = s.record(t, s.dataLoki)
		if stdinSeenL != "/dev/null" {
			t.Errorf("loki's runner stdin is %q, want /dev/null", stdinSeenL)
		}
		wantArgs := strings.Join([]string{s.runSh, "--provider", "claude", "--parallel", s.spec}, "\n")
		if argsL != wantArgs {
			t.Errorf("runner argv %q, want %q", argsL, wantArgs)
		}
		if recL["termination_reason"] != "crashed" || recL["state"] != "exited" || recL["request"] == nil {
			t.Errorf("loki record: %v", recL)
		}
		if ref == nil {
			return
		}
		cmd = ref.mainCmd(envR, argv...)
		stdinR := pipeStdin(t, cmd)
		_, stderr, code = run(t, cmd)
		stdinR.Close()
		if code != 3 {
			t.Fatalf("reference: exit %d, want 3: %s", code, stderr)
		}
		argsR, stdinSeenR := s.runnerSaw(t)
		if argsR != argsL {
			t.Errorf("runner argv: loki %q, reference %q", argsL, argsR)
		}
		// Divergence kept on purpose (docs/dashboard.md): the reference's
		// runner inherits the supervisor's stdin.
		if !strings.HasPrefix(stdinSeenR, "pipe:") {
			t.Errorf("reference runner stdin %q: expected the supervisor's pipe", stdinSeenR)
		}
		recR := s.record(t, s.dataRef)
		if a, b := normalize(t, recL, s.dataLoki), normalize(t, recR, s.dataRef); !reflect.DeepEqual(a, b) {
			ja, _ := json.MarshalIndent(a, "", " ")
			jb, _ := json.MarshalIndent(b, "", " ")
			t.Errorf("records differ:\nloki %s\nreference %s", ja, jb)
		}
	})
	if recL == nil {
		t.Fatal("no loki record to go on with")
	}

	t.Run("process identity", func(t *testing.T) {
		sleeper := exec.Command("/bin/sleep", "60")
		if err := sleeper.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
		zombie := exec.Command("/bin/true")
		if err := zombie.Start(); err != nil {
			t.Fatal(err)
		}
		defer zombie.Wait()
		if !testutil.WaitUntil(wait, func() bool { return stateOf(zombie.Process.Pid) == "Z" }) {
			t.Fatal("child did not become a zombie")
		}
		live := strconv.Itoa(sleeper.Process.Pid)
		pids := []string{live, " " + live + "\n", "+" + live, live[:1] + "_" + live[1:], strconv.Itoa(zombie.Process.Pid),
			jsonNum(recL["runner_pid"]), jsonNum(recL["supervisor_pid"]), "0", "-1", "abc", "1.5", "", "99999999999999999999"}
		// loki's answers, checked against /proc; the reference's calls are
		// collected and made in one batch.
		type answer struct{ what, out string }
		var answers []answer
		var calls []refCall
		for _, pid := range pids {
			tokOut, _, tokCode := s.loki(envL, "proc", "token", pid, "--json")
			stOut, _, stCode := s.loki(envL, "proc", "state", pid, "--json")
			var tok, st string
			json.Unmarshal([]byte(tokOut), &tok)
			json.Unmarshal([]byte(stOut), &st)
			if (tok != "") != (tokCode == 0) || (st != "") != (stCode == 0) {
				t.Errorf("pid %q: token %q exit %d, state %q exit %d: exit status and value disagree", pid, tok, tokCode, st, stCode)
			}
			// Computed: the token and state are /proc's, for a pid that
			// parses as Python's int() parses it.
			wantTok, wantSt := procFacts(pid)
			if tok != wantTok || st != wantSt {
				t.Errorf("pid %q: token %q state %q, want %q %q", pid, tok, st, wantTok, wantSt)
			}
			answers = append(answers, answer{"token " + pid, tokOut}, answer{"state " + pid, stOut})
			calls = append(calls, refCall{"ref.process_birth_token(a[0])", []any{pid}}, refCall{"ref.process_state(a[0])", []any{pid}})
			for _, token := range []string{tok, "proc:x:1", "", jsonStr(recL["runner_birth_token"])} {
				mOut, _, mCode := s.loki(envL, "proc", "matches", pid, token, "--json")
				want := token != "" && token == wantTok && wantSt != "Z"
				if strings.TrimSpace(mOut) != strconv.FormatBool(want) || (mCode == 0) != want {
					t.Errorf("proc matches %q %q: %q exit %d, want %v", pid, token, mOut, mCode, want)
				}
				answers = append(answers, answer{"matches " + pid + " " + token, mOut})
				calls = append(calls, refCall{"ref.process_identity_matches(a[0], a[1])", []any{pid, token}})
			}
		}
		if ref == nil {
			return
		}
		for i, r := range ref.batch(t, envR, calls) {
			if r.Error != "" {
				// os.kill overflows on a pid beyond C's int; loki answers
				// false (fail closed) instead of raising.
				t.Logf("reference %s raised %s; loki: %s", answers[i].what, r.Error, strings.TrimSpace(answers[i].out))
				continue
			}
			sameJSON(t, answers[i].what+" vs reference", []byte(answers[i].out), r.Value)
		}
	})

	t.Run("update_state on the exited record", func(t *testing.T) {
		pathL := filepath.Join(s.dataLoki, "dashboard", "builds", execID, "state.json")
		pathR := filepath.Join(s.dataRef, "dashboard", "builds", execID, "state.json")
		before, err := os.ReadFile(pathL)
		if err != nil {
			t.Fatal(err)
		}
		if ref != nil {
			// Start both from the same bytes: loki's record.
			if err := os.WriteFile(pathR, before, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		update := map[string]any{"stop_requested_at": "2026-12-04T03:00:00.000001Z", "dashboard_note": "seen",
			"state": "exited", "big": json.Number("123456789012345678901234567890")}
		fields, _ := json.Marshal(update)
		out, stderr, code := s.loki(envL, "update-state", execID, "-", "--json")
		_ = out
		if code != 2 {
			// "-" with no stdin is an empty document: refused.
			t.Errorf("update-state with empty stdin: exit %d (%s), want 2", code, stderr)
		}
		cmd := exec.Command(s.bin, "update-state", "--json", execID, "-")
		cmd.Env = envL
		cmd.Stdin = bytes.NewReader(fields)
		out, stderr, code = run(t, cmd)
		if code != 0 {
			t.Fatalf("update-state from stdin: exit %d: %s", code, stderr)
		}
		var got map[string]any
		dec := json.NewDecoder(strings.NewReader(out))
		dec.UseNumber()
		if err := dec.Decode(&got); err != nil {
			t.Fatal(err)
		}
		for k, v := range update {
			if fmt.Sprint(got[k]) != fmt.Sprint(v) {
				t.Errorf("merged %s = %v, want %v", k, got[k], v)
			}
		}
		if got["runner_pid"] == nil || got["termination_reason"] != "crashed" {
			t.Errorf("update lost the other fields: %v", got)
		}
		if ref != nil {
			var pyUpdate map[string]any
			dec := json.NewDecoder(bytes.NewReader(fields))
			dec.UseNumber()
			dec.Decode(&pyUpdate)
			v, raised := ref.call(t, envR, "ref.update_state(a[0], **a[1])", execID, pyUpdate)
			if raised != "" {
				t.Fatalf("reference raised %s", raised)
			}
			sameJSON(t, "merged record vs reference", []byte(out), v)
			sameFile(t, pathL, pathR)
		}
		checkPrivate(t, filepath.Dir(pathL))
		// Refusals leave the record as it was.
		after, _ := os.ReadFile(pathL)
		for _, bad := range []struct{ id, fields string }{
			{execID, `{"x": NaN}`}, {execID, `{"x": [Infinity]}`}, {execID, `["not", "an", "object"]`},
			{execID, `{"x": 1} trailing`}, {execID, `{"x": "\ud800"}`}, {execID, "{\"x\": \"\xff\"}"},
			{"not-a-uuid", `{"x": 1}`},
		} {
			if _, stderr, code := s.loki(envL, "update-state", bad.id, bad.fields); code != 2 || strings.Count(stderr, "\n") != 1 {
				t.Errorf("update-state %s %q: exit %d, stderr %q; want 2 and one line", bad.id, bad.fields, code, stderr)
			}
		}
		if now, _ := os.ReadFile(pathL); !bytes.Equal(now, after) {
			t.Errorf("a refused update changed the record")
		}
	})
}

// TestReferenceArgvRefusals: what argparse refuses, loki refuses with the
// same status and the same error line, and neither starts a build.
func TestReferenceArgvRefusals(t *testing.T) {
	s := newSite(t)
	ref := newReference(t)
	ok := []string{"--execution-id", execID, "--run-sh", s.runSh, "--workspace", s.workspace,
		"--loki-dir", s.lokiDir, "--spec", s.spec, "--provider", "claude"}
	with := func(extra ...string) []string { return append(append([]string{}, ok...), extra...) }
	prog := "build_supervisor.py"
	cases := []struct {
		name string
		argv []string
		code int
		line string // "" = not compared (the reference's is a traceback)
	}{
		{"stray positional", with("extra"), 2, prog + ": error: unrecognized arguments: extra"},
		{"ambiguous prefix", with("--p", "x"), 2, prog + ": error: ambiguous option: --p could match --provider, --parallel"},
		{"missing required", []string{"--exec", execID}, 2, prog + ": error: the following arguments are required: --run-sh, --workspace, --loki-dir, --spec, --provider"},
		{"missing value", []string{"--exec"}, 2, prog + ": error: argument --execution-id: expected one argument"},
		{"flag value", with("--parallel=yes"), 2, prog + ": error: argument --parallel: ignored explicit argument 'yes'"},
		{"loki-only flag", with("--hard-timeout=5"), 2, prog + ": error: unrecognized arguments: --hard-timeout=5"},
		{"double dash", with("--", "x"), 2, prog + ": error: unrecognized arguments: -- x"},
		{"invalid id", append([]string{"--execution-id", "nope"}, ok[2:]...), 1, ""},
		{"missing run.sh", append(append([]string{}, ok[:2]...), append([]string{"--run-sh", s.runSh + ".missing"}, ok[4:]...)...), 1, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(s.binDir, prog), tc.argv...)
			cmd.Env = s.env(s.dataLoki)
			stdout, stderr, code := run(t, cmd)
			if code != tc.code || (tc.line != "" && stderr != tc.line+"\n") || stdout != "" {
				t.Errorf("loki %q: exit %d, stderr %q; want %d, %q", tc.argv, code, stderr, tc.code, tc.line)
			}
			if strings.Count(stderr, "\n") != 1 {
				t.Errorf("loki printed %q; want exactly one line", stderr)
			}
			if _, err := os.Stat(filepath.Join(s.out, "args")); err == nil {
				t.Errorf("loki started the runner")
			}
			if ref != nil {
				_, rerr, rcode := run(t, ref.mainCmd(s.env(s.dataRef), tc.argv...))
				if rcode != code || (tc.line != "" && lastLine(rerr) != tc.line) {
					t.Errorf("reference: exit %d, %q; loki: exit %d, %q", rcode, lastLine(rerr), code, stderr)
				}
			}
			for _, d := range []string{s.dataLoki, s.dataRef} {
				if _, err := os.Stat(filepath.Join(d, "dashboard", "builds", execID, "state.json")); err == nil {
					t.Errorf("a record was made in %s", d)
				}
			}
		})
	}
	// loki-supervise itself, first argument an (abbreviated) reference
	// option: the same drop-in.
	cmd := exec.Command(s.bin, append([]string{"--exec=" + execID}, ok[2:]...)...)
	cmd.Env = s.env(s.dataLoki)
	if _, stderr, code := run(t, cmd); code != 3 {
		t.Fatalf("loki-supervise --exec=...: exit %d, want 3: %s", code, stderr)
	}
	if rec := s.record(t, s.dataLoki); rec["termination_reason"] != "crashed" {
		t.Errorf("record: %v", rec)
	}
}

// TestSeatbeltRequestedOffMacOSFailsClosed: LOKI_HOST_SEATBELT=1 where
// Seatbelt does not exist records launch_failed (127) with the reference's
// launch_error, and runs nothing, in both.
func TestSeatbeltRequestedOffMacOSFailsClosed(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("Seatbelt exists here")
	}
	s := newSite(t)
	ref := newReference(t)
	argv := []string{"--execution-id", execID, "--run-sh", s.runSh, "--workspace", s.workspace,
		"--loki-dir", s.lokiDir, "--spec", s.spec, "--provider", "claude"}
	keys := []string{"state", "termination_reason", "launch_error", "returncode", "exit_code", "signal", "proof"}
	pick := func(rec map[string]any) map[string]any {
		out := map[string]any{}
		for _, k := range keys {
			out[k] = rec[k]
		}
		return out
	}
	cmd := exec.Command(filepath.Join(s.binDir, "loki-build-supervisor"), argv...)
	cmd.Env = s.env(s.dataLoki, "LOKI_HOST_SEATBELT=1")
	if _, stderr, code := run(t, cmd); code != 127 {
		t.Fatalf("loki: exit %d, want 127: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(s.out, "args")); err == nil {
		t.Fatal("the runner ran unconfined")
	}
	recL := pick(s.record(t, s.dataLoki))
	if recL["termination_reason"] != "launch_failed" || recL["launch_error"] == "" {
		t.Errorf("loki record: %v", recL)
	}
	if ref == nil {
		return
	}
	if _, stderr, code := run(t, ref.mainCmd(s.env(s.dataRef, "LOKI_HOST_SEATBELT=1"), argv...)); code != 127 {
		t.Fatalf("reference: exit %d, want 127: %s", code, stderr)
	}
	if recR := pick(s.record(t, s.dataRef)); !reflect.DeepEqual(recL, recR) {
		t.Errorf("records differ:\nloki      %v\nreference %v", recL, recR)
	}
}

// TestBuildRefusesStrayArguments: `build` with an argument left over
// (after which urfave/cli would read no more flags, dropping a later
// --parallel) is refused before anything runs.
func TestBuildRefusesStrayArguments(t *testing.T) {
	s := newSite(t)
	ok := []string{"build", "--execution-id", execID, "--run-sh", s.runSh, "--workspace", s.workspace,
		"--loki-dir", s.lokiDir, "--spec", s.spec, "--provider", "claude"}
	for _, extra := range [][]string{{"extra"}, {"extra", "--parallel"}, {"--", "x"}} {
		_, stderr, code := s.loki(s.env(s.dataLoki), append(append([]string{}, ok...), extra...)...)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "unexpected argument") {
			t.Errorf("build ... %q: exit %d, stderr %q; want 2 and one line", extra, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(s.out, "args")); err == nil {
			t.Fatalf("build ... %q started the runner", extra)
		}
		if _, err := os.Stat(filepath.Join(s.dataLoki, "dashboard", "builds", execID)); err == nil {
			t.Fatalf("build ... %q made a record", extra)
		}
	}
}

// TestEmptyDataDirIsCurrentDirectory: LOKI_DATA_DIR="" puts records under
// the current directory, where the reference (and so a dashboard using its
// executions_root) looks.
func TestEmptyDataDirIsCurrentDirectory(t *testing.T) {
	s := newSite(t)
	ref := newReference(t)
	cwd := filepath.Join(s.root, "cwd")
	if err := os.Mkdir(cwd, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(s.bin, "update-state", execID, `{"state":"queued"}`)
	cmd.Env, cmd.Dir = s.env(""), cwd
	if _, stderr, code := run(t, cmd); code != 0 {
		t.Fatalf("update-state: exit %d: %s", code, stderr)
	}
	want := filepath.Join(cwd, "dashboard", "builds", execID, "state.json")
	if _, err := os.Stat(want); err != nil {
		t.Fatalf("record not under the current directory: %v", err)
	}
	if ref != nil {
		cmd := exec.Command(ref.python, "-c", callPy, ref.dir, "str(ref.state_path(a[0]))", `["`+execID+`"]`)
		cmd.Env, cmd.Dir = s.env(""), cwd
		out, stderr, code := run(t, cmd)
		if code != 0 {
			t.Fatalf("reference: %s", stderr)
		}
		sameJSON(t, "state path", []byte(`{"value":`+strconv.Quote(want)+`}`), []byte(out))
	}
}

// pipeStdin gives cmd a pipe as stdin (kept open until the caller closes
// the returned end), as a dashboard's Popen may.
func pipeStdin(t *testing.T, cmd *exec.Cmd) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = r
	t.Cleanup(func() { r.Close(); w.Close() })
	return w
}

// runnerSaw returns (and removes) what the runner recorded.
func (s *site) runnerSaw(t *testing.T) (args, stdin string) {
	t.Helper()
	a, err := os.ReadFile(filepath.Join(s.out, "args"))
	if err != nil {
		t.Fatalf("the runner did not run: %v", err)
	}
	in, _ := os.ReadFile(filepath.Join(s.out, "stdin"))
	os.Remove(filepath.Join(s.out, "args"))
	os.Remove(filepath.Join(s.out, "stdin"))
	return strings.TrimSpace(string(a)), strings.TrimSpace(string(in))
}

func (s *site) record(t *testing.T, data string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, "dashboard", "builds", execID, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

var utcStamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$`)

// normalize replaces what differs between two runs by nature (times,
// pids, birth tokens, the data dir) after checking its form.
func normalize(t *testing.T, rec map[string]any, data string) map[string]any {
	t.Helper()
	out := map[string]any{}
	for k, v := range rec {
		out[k] = v
	}
	for _, k := range []string{"started_at", "exited_at", "finished_at"} {
		if s, _ := rec[k].(string); !utcStamp.MatchString(s) {
			t.Errorf("%s = %v: not a UTC stamp", k, rec[k])
		}
		out[k] = "STAMP"
	}
	for _, k := range []string{"supervisor_pid", "runner_pid", "runner_pgid", "runner_sid"} {
		if f, ok := rec[k].(float64); !ok || f <= 1 {
			t.Errorf("%s = %v: not a pid", k, rec[k])
		}
		out[k] = "PID"
	}
	if rec["runner_pid"] != rec["runner_pgid"] || rec["runner_pid"] != rec["runner_sid"] {
		t.Errorf("runner is not its own group and session leader: %v", rec)
	}
	for _, k := range []string{"supervisor_birth_token", "runner_birth_token"} {
		if s, _ := rec[k].(string); !strings.HasPrefix(s, "proc:") {
			t.Errorf("%s = %v", k, rec[k])
		}
		out[k] = "TOKEN"
	}
	if rec["runner_log"] != filepath.Join(data, "dashboard", "builds", execID, "runner.log") {
		t.Errorf("runner_log = %v", rec["runner_log"])
	}
	out["runner_log"] = "LOG"
	return out
}

func checkPrivate(t *testing.T, dir string) {
	t.Helper()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("%s is %v, want 0700", dir, fi.Mode().Perm())
	}
	for _, name := range []string{"state.json", ".lock"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v, want 0600", name, fi.Mode().Perm())
		}
	}
}

func sameFile(t *testing.T, a, b string) {
	t.Helper()
	ba, err1 := os.ReadFile(a)
	bb, err2 := os.ReadFile(b)
	if err1 != nil || err2 != nil {
		t.Fatalf("read %s / %s: %v %v", a, b, err1, err2)
	}
	if !bytes.Equal(ba, bb) {
		t.Errorf("state.json differs:\nloki\n%s\nreference\n%s", ba, bb)
	}
}

// procFacts computes the token and state a pid string names, from /proc
// directly: the pid must parse as Python's int() parses it.
func procFacts(raw string) (token, state string) {
	pid, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(raw), "_", ""))
	if err != nil || pid <= 0 {
		return "", ""
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", ""
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return "proc:" + strings.TrimSpace(string(boot)) + ":" + f[19], f[0]
}

func stateOf(pid int) string { _, st := procFacts(strconv.Itoa(pid)); return st }

func jsonNum(v any) string {
	f, _ := v.(float64)
	return strconv.Itoa(int(f))
}

func jsonStr(v any) string { s, _ := v.(string); return s }
