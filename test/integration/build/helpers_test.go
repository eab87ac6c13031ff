package build

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/testutil"
)

// wait bounds every wait of these tests: generous, because the machine
// running them may be heavily loaded.
const wait = 60 * time.Second

// env is one isolated loki installation: data dir, workspace, loki dir
// and spec, plus the supervisor's environment.
type env struct {
	t         *testing.T
	bin       string
	data      string
	workspace string
	lokiDir   string
	spec      string
	vars      []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{
		t:         t,
		bin:       testutil.Binary(t, "loki-supervise"),
		data:      filepath.Join(root, "data"),
		workspace: filepath.Join(root, "ws"),
		lokiDir:   filepath.Join(root, "ws", ".loki"),
		spec:      filepath.Join(root, "spec.md"),
	}
	for _, d := range []string{e.workspace, e.lokiDir, filepath.Join(e.lokiDir, "state")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(e.spec, []byte("# build the thing\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOKI_") {
			e.vars = append(e.vars, kv)
		}
	}
	e.vars = append(e.vars, "LOKI_DATA_DIR="+e.data, "LOKI_BUILD_SUPERVISOR_POLL_SECONDS=0.05",
		"LOKI_BUILD_DESCENDANT_GRACE_SECONDS=0.5")
	return e
}

func (e *env) store() *state.Store {
	return state.NewStore(filepath.Join(e.data, "dashboard", "builds"))
}

// runSh writes an executable runner script. The script gets
// `--provider NAME [--parallel] SPEC` as its arguments.
func (e *env) runSh(body string) string {
	e.t.Helper()
	p := filepath.Join(filepath.Dir(e.workspace), "run.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) command(args ...string) *exec.Cmd {
	cmd := exec.Command(e.bin, args...)
	cmd.Env = e.vars
	return cmd
}

// cli runs a short subcommand to completion and returns its output.
func (e *env) cli(args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, args...)
	cmd.Env = e.vars
	var o, er bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &er
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("%v: %v", args, err)
	}
	return o.String(), er.String(), code
}

func (e *env) buildArgs(id, runSh string, extra ...string) []string {
	return append([]string{"build", "--execution-id", id, "--run-sh", runSh, "--workspace", e.workspace,
		"--loki-dir", e.lokiDir, "--spec", e.spec, "--provider", "claude"}, extra...)
}

// supervisor is a running `build` or `run`.
type supervisor struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	w      *testutil.Waiter
}

// start launches a supervisor and registers a cleanup that kills it and,
// if its runner survived, the runner's verified group.
func (e *env) start(id string, args ...string) *supervisor {
	e.t.Helper()
	s := &supervisor{cmd: e.command(args...)}
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	s.w = testutil.Wait(s.cmd)
	e.t.Cleanup(func() {
		s.w.Kill()
		e.killRunner(id)
	})
	return s
}

// killRunner SIGKILLs the runner group of id if it is still the one the
// record names (this test started it).
func (e *env) killRunner(id string) {
	st, err := e.store().Read(state.MustParseID(id))
	if err != nil {
		return
	}
	pid, _ := st.Int("runner_pid")
	g := procid.Group{PID: pid, PGID: pid, SID: pid, Token: st.Str("runner_birth_token")}
	g.Signal(syscall.SIGKILL)
}

// exit waits for the supervisor to end and returns its exit code.
func (s *supervisor) exit(t *testing.T) int {
	t.Helper()
	select {
	case <-s.w.Done():
		return testutil.ExitCode(s.w.Err())
	case <-time.After(wait):
		t.Fatalf("supervisor did not exit within %v; stderr: %s", wait, s.stderr.String())
	}
	return -1
}

// waitFor polls the record until cond holds.
func (e *env) waitFor(id string, what string, cond func(state.State) bool) state.State {
	e.t.Helper()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if st, err := e.store().Read(state.MustParseID(id)); err == nil && cond(st) {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
	st, _ := e.store().Read(state.MustParseID(id))
	e.t.Fatalf("timed out waiting for %s; record: %v", what, st)
	return nil
}

func (e *env) record(id string) state.State {
	e.t.Helper()
	st, err := e.store().Read(state.MustParseID(id))
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

func (e *env) log(id string) string {
	b, _ := os.ReadFile(e.store().Path(state.MustParseID(id), state.LogFile))
	return string(b)
}

// waitLog polls runner.log until it contains s (the runner reached a point).
func (e *env) waitLog(id, s string) {
	e.t.Helper()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if strings.Contains(e.log(id), s) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("runner.log never contained %q; log: %q", s, e.log(id))
}

func running(st state.State) bool { return st.Str("state") == "running" }

// jsonOf re-encodes a record value for comparisons of nested objects.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func writeFile(p string) error { return os.WriteFile(p, nil, 0o600) }
