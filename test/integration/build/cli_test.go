package build

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/testutil"
)

func TestRunMintsIDAndReportsIt(t *testing.T) {
	e := newEnv(t)
	// --json: one JSON line on stdout, before the command runs.
	out, errOut, code := e.cli("run", "--json", "--workspace", e.workspace, "--", "/bin/sh", "-c", "echo out; echo err >&2; exit 5")
	if code != 5 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v struct {
		ExecutionID string `json:"execution_id"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("stdout %q is not one JSON object: %v", out, err)
	}
	id, err := state.ParseID(v.ExecutionID)
	if err != nil || id.String() != v.ExecutionID {
		t.Fatalf("minted id %q is not canonical", v.ExecutionID)
	}
	st := e.record(id.String())
	if st.Str("termination_reason") != "failed" || e.log(id.String()) != "out\nerr\n" {
		t.Errorf("record %v log %q", st.Str("termination_reason"), e.log(id.String()))
	}
	// Without --json the id goes to stderr, stdout stays the caller's, and
	// one more line says how it ended and where its output is.
	out, errOut, code = e.cli("run", "--workspace", e.workspace, "--", "true")
	if lines := strings.Split(strings.TrimSpace(errOut), "\n"); code != 0 || out != "" || len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "loki-supervise: execution ") ||
		!strings.HasSuffix(lines[1], " succeeded (exit 0); output: loki-supervise logs "+strings.TrimPrefix(lines[0], "loki-supervise: execution ")) {
		t.Errorf("run without --json: %d %q %q", code, out, errOut)
	}
	// --follow prints the output as it comes, then how it ended.
	out, errOut, code = e.cli("run", "--follow", "--workspace", e.workspace, "--", "/bin/sh", "-c", "echo one; sleep 0.3; echo two >&2; exit 7")
	if code != 7 || out != "one\ntwo\n" || !strings.Contains(errOut, " failed (exit 7)\n") {
		t.Errorf("run --follow: %d %q %q", code, out, errOut)
	}
	// A given id is used as is and may not be reused.
	given := "eeeeeeee-2222-4333-8444-555555555555"
	if _, errOut, code := e.cli("run", "--execution-id", given, "--workspace", e.workspace, "--", "true"); code != 0 {
		t.Fatalf("run with id: %d %s", code, errOut)
	}
	if _, errOut, code := e.cli("run", "--execution-id", given, "--workspace", e.workspace, "--", "true"); code != 2 || !strings.Contains(errOut, "already exists") {
		t.Errorf("reused id: %d %q", code, errOut)
	}
	// A command that does not exist is a launch failure.
	missing := "eeeeeeee-2222-4333-8444-555555555556"
	if _, _, code := e.cli("run", "--execution-id", missing, "--workspace", e.workspace, "--", "/no/such/cmd"); code != 127 {
		t.Errorf("missing command exit %d, want 127", code)
	}
	if st := e.record(missing); st.Str("termination_reason") != "launch_failed" || st.Str("launch_error") == "" {
		t.Errorf("missing command record %v", st)
	}
}

func TestListAndStatus(t *testing.T) {
	e := newEnv(t)
	a, b := "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b"
	e.cli("run", "--execution-id", a, "--workspace", e.workspace, "--", "/bin/sh", "-c", "exit 4")
	s := e.start(b, "run", "--execution-id", b, "--workspace", e.workspace, "--", "/bin/sh", "-c", "echo up; exec sleep 60")
	e.waitFor(b, "running", running)

	out, _, code := e.cli("list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "EXECUTION") ||
		!strings.Contains(lines[1], a) || !strings.Contains(lines[1], "exited (failed)") || !strings.HasSuffix(lines[1], "4") ||
		!strings.Contains(lines[2], b) || !strings.Contains(lines[2], "running") {
		t.Errorf("list:\n%s", out)
	}
	out, _, _ = e.cli("list", "--json")
	var recs []map[string]any
	if err := json.Unmarshal([]byte(out), &recs); err != nil || len(recs) != 2 {
		t.Fatalf("list --json: %v %q", err, out)
	}
	if recs[1]["supervisor_alive"] != true || recs[1]["display_state"] != "running" {
		t.Errorf("live record derived fields: %v %v", recs[1]["supervisor_alive"], recs[1]["display_state"])
	}
	out, _, _ = e.cli("status", b)
	for _, want := range []string{"execution  " + b, "state      running", "runner     pid "} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	e.cli("stop", b)
	s.exit(t)
	if out, _, _ := e.cli("status", b); !strings.Contains(out, "exited (stopped)") || !strings.Contains(out, "exit       signal 15") {
		t.Errorf("status after stop:\n%s", out)
	}
}

func TestLogsFollow(t *testing.T) {
	e := newEnv(t)
	id := "ffffffff-2222-4333-8444-555555555555"
	gate := e.workspace + "/go"
	script := `echo first; while [ ! -e ` + gate + ` ]; do sleep 0.05; done; echo second; exit 0`
	s := e.start(id, "run", "--execution-id", id, "--workspace", e.workspace, "--", "/bin/sh", "-c", script)
	e.waitLog(id, "first")
	if out, _, code := e.cli("logs", id); code != 0 || out != "first\n" {
		t.Errorf("logs: %d %q", code, out)
	}
	follow := e.command("logs", id, "--follow")
	stdout, _ := follow.StdoutPipe()
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	if l := <-lines; l != "first" {
		t.Fatalf("first followed line %q", l)
	}
	if err := writeFile(gate); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-lines:
		if l != "second" {
			t.Fatalf("second followed line %q", l)
		}
	case <-time.After(wait):
		t.Fatal("follow did not deliver new output")
	}
	s.exit(t)
	w := testutil.Wait(follow)
	if _, ok := w.Within(wait); !ok {
		t.Fatal("logs --follow did not end after the execution exited")
	} else if w.Err() != nil {
		t.Fatalf("logs --follow: %v", w.Err())
	}
}

// TestRunLeavesTheWorkspaceAlone: a run without --loki-dir writes nothing
// into its workspace but what the command writes, given by --workspace or
// taken from the cwd: the runner's TMPDIR and LOKI_DIR are its own dir in
// its record (0700) and writable. Before, every run made WORKSPACE/.loki
// (host-runtime and its gitconfig), in whatever dir it ran, even /.
func TestRunLeavesTheWorkspaceAlone(t *testing.T) {
	e := newEnv(t)
	script := `echo tmp > "$TMPDIR/f" && cat "$TMPDIR/f" && echo "dir=$LOKI_DIR"`
	for _, given := range []bool{true, false} {
		ws := t.TempDir()
		args := []string{"run", "--json", "--", "/bin/sh", "-c", script}
		if given {
			args = []string{"run", "--json", "--workspace", ws, "--", "/bin/sh", "-c", script}
		}
		cmd := e.command(args...)
		cmd.Dir = ws
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("--workspace given %v: %v", given, err)
		}
		var v struct {
			ExecutionID string `json:"execution_id"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("stdout %q: %v", out, err)
		}
		own := filepath.Join(e.store().Dir(state.MustParseID(v.ExecutionID)), "loki")
		if log := e.log(v.ExecutionID); log != "tmp\ndir="+own+"\n" {
			t.Errorf("--workspace given %v: log %q, want the runner's TMPDIR written and LOKI_DIR %s", given, log, own)
		}
		if fi, err := os.Stat(own); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("the run's own dir %s: %v", own, err)
		}
		if entries, _ := os.ReadDir(ws); len(entries) != 0 {
			t.Errorf("--workspace given %v: the workspace holds %v, want nothing", given, entries)
		}
	}
}
