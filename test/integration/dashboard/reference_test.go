package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// refSource is where the reference supervisor is looked for.
func refSource() string {
	if p := os.Getenv("LOKI_REFERENCE_SUPERVISOR"); p != "" {
		return p
	}
	return "/work/shared/seeds/build_supervisor.py"
}

// reference is a runnable copy of the reference supervisor: the seed copied
// to DIR/dashboard/build_supervisor.py with the helpers it imports stubbed
// under DIR/autonomy/lib (spawn_tracked starts a session leader and tracks
// nothing; reconcile_lineage finds nothing; compute_tree_digest asks loki's
// digest, the port of that helper). Nothing of it is in the repository.
type reference struct {
	dir    string
	python string
}

var stubs = map[string]string{
	"autonomy/__init__.py":     "",
	"autonomy/lib/__init__.py": "",
	"autonomy/lib/deadline.py": `import subprocess


class _Tracker:
    def refresh(self):
        pass

    def close(self):
        pass


def spawn_tracked(args, cwd, env, stdout, stderr):
    child = subprocess.Popen(args, cwd=cwd, env=env, stdout=stdout, stderr=stderr, start_new_session=True)
    return child, _Tracker()


def reconcile_lineage(process, tracker, grace):
    return {"checked": True, "detected": False, "quiescent": True, "term_sent": [],
            "kill_sent": [], "remaining_pids": [], "error": ""}
`,
	"autonomy/lib/tree_digest.py": `import os
import subprocess


def compute_tree_digest(path):
    out = subprocess.run([os.environ["LOKI_TEST_SUPERVISE"], "digest", str(path)],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()
`,
}

// newReference returns nil (and says why) when the reference or python3
// is missing; the caller then checks loki alone.
func newReference(t *testing.T) *reference {
	t.Helper()
	src, err := os.ReadFile(refSource())
	if err != nil {
		t.Logf("reference supervisor not available (%v): loki is checked against computed values only", err)
		return nil
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Logf("python3 not available: loki is checked against computed values only")
		return nil
	}
	r := &reference{dir: t.TempDir(), python: py}
	files := map[string]string{"dashboard/build_supervisor.py": string(src)}
	for k, v := range stubs {
		files[k] = v
	}
	for name, body := range files {
		p := filepath.Join(r.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func (r *reference) script() string { return filepath.Join(r.dir, "dashboard", "build_supervisor.py") }

// callPy evaluates one expression against the module (bound to ref, with
// the JSON-decoded arguments as a) and prints {"value": v} or
// {"error": exception class}.
const callPy = `
import json, sys
from pathlib import Path
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/dashboard"]
import build_supervisor as ref
a = json.loads(sys.argv[3])
try:
    v = eval(sys.argv[2], {"ref": ref, "Path": Path, "a": a})
except Exception as e:
    print(json.dumps({"error": type(e).__name__}))
else:
    print(json.dumps({"value": v}, sort_keys=True))
`

// batchPy evaluates a list of [expression, arguments] pairs in one
// interpreter and prints one {"value"}/{"error"} object per pair.
const batchPy = `
import json, sys
from pathlib import Path
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/dashboard"]
import build_supervisor as ref
out = []
for expr, a in json.loads(sys.stdin.read()):
    try:
        out.append({"value": eval(expr, {"ref": ref, "Path": Path, "a": a})})
    except Exception as e:
        out.append({"error": type(e).__name__})
print(json.dumps(out, sort_keys=True))
`

// refCall is one call of a batch.
type refCall struct {
	Expr string
	Args []any
}

// refResult is one answer of a batch.
type refResult struct {
	Value json.RawMessage `json:"value"`
	Error string          `json:"error"`
}

// batch makes many calls in one interpreter (each costs ~0.1 s to start).
func (r *reference) batch(t *testing.T, env []string, calls []refCall) []refResult {
	t.Helper()
	pairs := make([][]any, len(calls))
	for i, c := range calls {
		pairs[i] = []any{c.Expr, c.Args}
	}
	in, err := json.Marshal(pairs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.python, "-c", batchPy, r.dir)
	cmd.Env, cmd.Stdin = env, bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference batch: %v\n%s", err, stderr.String())
	}
	var res []refResult
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(calls) {
		t.Fatalf("reference batch printed %q: %v", out, err)
	}
	return res
}

// call returns the reference function's value as JSON, or the name of the
// exception it raised.
func (r *reference) call(t *testing.T, env []string, expr string, args ...any) (value json.RawMessage, raised string) {
	t.Helper()
	a, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.python, "-c", callPy, r.dir, expr, string(a))
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference %s: %v\n%s", expr, err, stderr.String())
	}
	var res struct {
		Value json.RawMessage `json:"value"`
		Error string          `json:"error"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("reference %s printed %q: %v", expr, out, err)
	}
	return res.Value, res.Error
}

// mainCmd is the reference's command line, as a dashboard runs it.
func (r *reference) mainCmd(env []string, argv ...string) *exec.Cmd {
	cmd := exec.Command(r.python, append([]string{r.script()}, argv...)...)
	cmd.Env = append(append([]string{}, env...), "PYTHONPATH="+r.dir)
	return cmd
}

// lastLine is the last non-empty line of s (argparse prints usage lines
// before its one error line).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
