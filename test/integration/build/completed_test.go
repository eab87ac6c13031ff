package build

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/testutil"
)

// sealReceipt is what a run.sh that finished its work leaves behind: a
// VERIFIED receipt for RUN_ID over the tree digest TREE, sealed with the
// reference's integrity hash (SHA-256 over Python's canonical JSON).
// test/integration/proof covers the ways a receipt can fail to bind; here
// it only has to be good.
const sealReceipt = `import hashlib, json, sys
run_id, tree = sys.argv[1], sys.argv[2]
d = {"run_id": run_id, "tree_sha256": tree, "headline": "VERIFIED",
     "facts": {"execution": {"terminated": False, "exit_code": 0, "run_status": "deterministic_gates_passed", "outcome": "completed"},
               "tests": {"status": "passed", "command": "go test ./...", "exit_code": 0},
               "git": {"diff_count": 1, "tree_sha256": tree}}}
d["verification"] = {"hash": hashlib.sha256(json.dumps(d, sort_keys=True, separators=(",", ":")).encode()).hexdigest()}
sys.stdout.write(json.dumps(d, indent=2))
`

// completedRunner is a run.sh that follows the record while it works. It
// waits (bounded) for the supervisor to record it as running and copies
// that record, mints a run id and copies the record once the supervisor
// picked the id up, changes the workspace, and then (unless told not to)
// digests it and writes a sealed receipt for the run id.
const completedRunner = `set -e
state=%[1]q snaps=%[2]q run_id=%[3]q
await() { i=0; until grep -q "$1" "$state" 2>/dev/null; do i=$((i+1)); [ $i -lt 6000 ] || exit 90; sleep 0.01; done; }
await '"state": "running"'
cp "$state" "$snaps/running.json"
echo $$ > "$snaps/pid"
echo "$run_id" > "$LOKI_DIR/state/trust-run-id"
await "\"run_id\": \"$run_id\""
cp "$state" "$snaps/run_id.json"
echo feature > feature.txt
[ %[4]q = receipt ] || exit 0
mkdir -p "$LOKI_DIR/proofs/$run_id"
tree=$(%[5]q digest "$PWD")
%[6]q %[7]q "$run_id" "$tree" > "$LOKI_DIR/proofs/$run_id/proof.json"
`

// runningFields are the fields of the record while the runner runs, in
// the reference: the supervisor's identity first, then the runner's.
var runningFields = []string{"execution_id", "runner_birth_token", "runner_log", "runner_pgid", "runner_pid",
	"runner_sid", "schema_version", "started_at", "state", "supervisor_birth_token", "supervisor_pid"}

// TestBuildCompletedRecord runs a build that ends `completed` with a bound
// VERIFIED receipt, and one that exits 0 after minting a run id but leaves
// no receipt (`verification_failed`), and checks the record at each
// transition of the reference supervisor: running, run id picked up by the
// poll loop, exited. Fields never disappear and never change once set,
// except the ones the exit rewrites.
func TestBuildCompletedRecord(t *testing.T) {
	python := testutil.RequireCommand(t, "python3")
	gitBin := testutil.RequireCommand(t, "git")
	for i, tc := range []struct {
		name, receipt, reason string
	}{
		{"bound VERIFIED receipt completes", "receipt", "completed"},
		{"exit 0 without a receipt", "none", "verification_failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			gitInit(t, gitBin, e.workspace)
			id := "eeeeeeee-2222-4333-8444-55555555555" + strconv.Itoa(i)
			snaps := t.TempDir()
			seal := filepath.Join(snaps, "seal.py")
			if err := os.WriteFile(seal, []byte(sealReceipt), 0o600); err != nil {
				t.Fatal(err)
			}
			runID := "run-e2e-" + strconv.Itoa(i)
			statePath := e.store().Path(state.MustParseID(id), state.StateFile)
			script := fmt.Sprintf(completedRunner, statePath, snaps, runID, tc.receipt, e.bin, python, seal)
			s := e.start(id, e.buildArgs(id, e.runSh(script))...)
			if got := s.exit(t); got != 0 {
				t.Fatalf("exit %d; stderr %s; log %q", got, s.stderr.String(), e.log(id))
			}
			final := e.record(id)
			checkRecord(t, e, id, final, 0, tc.reason)
			running := readSnap(t, filepath.Join(snaps, "running.json"))
			withRunID := readSnap(t, filepath.Join(snaps, "run_id.json"))
			checkTransitions(t, running, withRunID, final, runID)
			if pid, _ := os.ReadFile(filepath.Join(snaps, "pid")); strings.TrimSpace(string(pid)) != strconv.Itoa(intField(final, "runner_pid")) {
				t.Errorf("runner_pid %v, the runner was %s", final["runner_pid"], pid)
			}
			if final.Str("run_id") != runID || final.Str("final_tree_sha256") == "" {
				t.Errorf("run_id %q final_tree_sha256 %q", final.Str("run_id"), final.Str("final_tree_sha256"))
			}
			if tc.receipt == "receipt" {
				checkBoundProof(t, e, id, final, runID)
			} else {
				checkAbsentProof(t, id, final)
			}
		})
	}
}

// gitInit makes the workspace a git work tree with one tracked file: the
// tree digest is defined over git's view of the workspace.
func gitInit(t *testing.T, gitBin, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "README"}} {
		cmd := exec.Command(gitBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func readSnap(t *testing.T, path string) state.State {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the runner left no snapshot: %v", err)
	}
	st, err := state.Decode(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return st
}

func intField(st state.State, k string) int {
	v, _ := st.Int(k)
	return v
}

// checkTransitions compares the snapshots in the reference's order.
func checkTransitions(t *testing.T, running, withRunID, final state.State, runID string) {
	t.Helper()
	if got := keys(running); !slices.Equal(got, runningFields) {
		t.Errorf("running record fields\n got %v\nwant %v", got, runningFields)
	}
	if running.Str("state") != "running" || !timestamp.MatchString(running.Str("started_at")) {
		t.Errorf("running record: %v", jsonOf(running))
	}
	want := slices.Sorted(slices.Values(append(slices.Clone(runningFields), "run_id")))
	if got := keys(withRunID); !slices.Equal(got, want) {
		t.Errorf("record after the run id\n got %v\nwant %v", got, want)
	}
	if withRunID.Str("run_id") != runID || withRunID.Str("state") != "running" {
		t.Errorf("record after the run id: %v", jsonOf(withRunID))
	}
	for _, k := range runningFields {
		if k == "state" {
			continue
		}
		if jsonOf(running[k]) != jsonOf(withRunID[k]) || jsonOf(running[k]) != jsonOf(final[k]) {
			t.Errorf("%s changed: running %v, after run id %v, exited %v", k, running[k], withRunID[k], final[k])
		}
	}
	if final.Str("exited_at") < running.Str("started_at") {
		t.Errorf("exited_at %s before started_at %s", final.Str("exited_at"), running.Str("started_at"))
	}
}

// proofFields are the keys of the record's proof object (the reference's
// _proof_binding).
var proofFields = []string{"bound", "document_sha256", "execution", "failed_quality_gates", "headline", "integrity",
	"present", "proof_path", "proof_url", "run_id", "snapshot_error", "snapshotted", "tree_fields_agree", "tree_sha256"}

func checkBoundProof(t *testing.T, e *env, id string, st state.State, runID string) {
	t.Helper()
	p := st.Map("proof")
	if got := keys(state.State(p)); !slices.Equal(got, proofFields) {
		t.Errorf("proof fields\n got %v\nwant %v", got, proofFields)
	}
	snapshot := e.store().Path(state.MustParseID(id), "proof.json")
	raw, err := os.ReadFile(snapshot)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	integrity, _ := p["integrity"].(map[string]any)
	exec, _ := p["execution"].(map[string]any)
	for k, ok := range map[string]bool{
		"present, snapshotted, bound": p["present"] == true && p["snapshotted"] == true && p["bound"] == true,
		"run id":                      p["run_id"] == runID,
		"headline":                    p["headline"] == "VERIFIED",
		"tree is the final tree":      p["tree_sha256"] == st.Str("final_tree_sha256") && p["tree_fields_agree"] == true,
		"document digest":             p["document_sha256"] == hex.EncodeToString(sum[:]),
		"snapshot path":               p["proof_path"] == snapshot && p["snapshot_error"] == "",
		"proof url":                   p["proof_url"] == "/api/control/builds/"+id+"/proof",
		"integrity":                   integrity["ok"] == true && integrity["hash_ok"] == true && integrity["headline_consistent"] == true,
		"execution facts":             exec["run_status"] == "deterministic_gates_passed" && jsonOf(exec["exit_code"]) == "0",
		"no failed gate":              jsonOf(p["failed_quality_gates"]) == "[]",
	} {
		if !ok {
			t.Errorf("proof: %s wrong: %s", k, jsonOf(p))
		}
	}
}

func checkAbsentProof(t *testing.T, id string, st state.State) {
	t.Helper()
	p := st.Map("proof")
	integrity, _ := p["integrity"].(map[string]any)
	if p["present"] != false || p["bound"] != false || p["snapshotted"] != false ||
		p["proof_url"] != "/api/control/builds/"+id+"/proof" || integrity["ok"] != false ||
		integrity["reason"] != "proof not present" {
		t.Errorf("proof of a run without a receipt: %s", jsonOf(p))
	}
}
