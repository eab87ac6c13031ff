package proof

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
)

// sealPy plays the reference tool that writes receipts: it builds a
// VERIFIED receipt for a run id and a tree digest and seals it with
// Python's own canonical JSON and SHA-256.
const sealPy = `import hashlib, json, sys
run_id, tree = sys.argv[1], sys.argv[2]
d = {"run_id": run_id, "tree_sha256": tree, "headline": "VERIFIED",
     "honesty": {"headline": "VERIFIED", "notes": "\u00e9t\u00e9 \U0001F680"},
     "facts": {"execution": {"terminated": False, "exit_code": 0, "run_status": "council_approved", "outcome": "completed"},
               "tests": {"status": "passed", "command": "make test", "exit_code": 0},
               "git": {"diff_count": 1, "tree_sha256": tree}},
     "cost": {"available": True, "tokens": 1234, "usd": 0.012}}
d["verification"] = {"hash": hashlib.sha256(json.dumps(d, sort_keys=True, separators=(",", ":")).encode()).hexdigest()}
sys.stdout.write(json.dumps(d, indent=1, ensure_ascii=False))
`

func uuid4(t *testing.T) string {
	t.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// TestBuildBindsReceipt runs `loki-supervise build` end to end: the runner
// mints a run id, changes the workspace, digests it with `loki-supervise
// digest` and leaves a receipt sealed by Python; the supervisor must
// snapshot it, bind it to its own digest of the final tree, and complete —
// unless one condition is broken.
func TestBuildBindsReceipt(t *testing.T) {
	testutil.RequireCommand(t, "git")
	python := testutil.RequireCommand(t, "python3")
	bin := testutil.Binary(t, "loki-supervise")
	for _, tc := range []struct {
		name   string
		after  string // shell run after the receipt is written
		runID  string // the run id minted during the run ("" = none)
		reason string
		bound  bool
	}{
		{"bound and completed", "", "run-e2e-1", "completed", true},
		{"tree changed after the receipt", "echo late > late.txt", "run-e2e-1", "verification_failed", false},
		{"receipt edited after sealing", `sed -i 's/make test/make tests/' "$proofs/proof.json"`, "run-e2e-1", "verification_failed", false},
		{"stale run id", "", "", "verification_failed", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			data, ws := filepath.Join(root, "data"), filepath.Join(root, "ws")
			lokiDir := filepath.Join(ws, ".loki")
			if err := os.MkdirAll(filepath.Join(lokiDir, "state"), 0o700); err != nil {
				t.Fatal(err)
			}
			git(t, ws, "init", "-q")
			if err := os.WriteFile(filepath.Join(ws, "README"), []byte("base\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			git(t, ws, "add", "README")
			// A run id left by an earlier run: it must never bind.
			if err := os.WriteFile(filepath.Join(lokiDir, "state", "trust-run-id"), []byte("run-e2e-old\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			seal := filepath.Join(root, "seal.py")
			spec := filepath.Join(root, "spec.md")
			for p, c := range map[string]string{seal: sealPy, spec: "# spec\n"} {
				if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			receiptRun := tc.runID
			mint := fmt.Sprintf("echo %s > %s/state/trust-run-id", tc.runID, lokiDir)
			if tc.runID == "" {
				receiptRun, mint = "run-e2e-old", ":"
			}
			script := fmt.Sprintf(`#!/bin/sh
set -e
%s
echo feature > feature.txt
proofs=%s/proofs/%s
mkdir -p "$proofs"
tree=$(%s digest "$PWD")
%s %s %s "$tree" > "$proofs/proof.json"
%s
`, mint, lokiDir, receiptRun, bin, python, seal, receiptRun, tc.after)
			runSh := filepath.Join(root, "run.sh")
			if err := os.WriteFile(runSh, []byte(script), 0o700); err != nil {
				t.Fatal(err)
			}
			id := uuid4(t)
			cmd := exec.Command(bin, "build", "--execution-id", id, "--run-sh", runSh, "--workspace", ws,
				"--loki-dir", lokiDir, "--spec", spec, "--provider", "claude")
			cmd.Env = append(os.Environ(), "LOKI_DATA_DIR="+data, "LOKI_BUILD_SUPERVISOR_POLL_SECONDS=0.05",
				"LOKI_BUILD_DESCENDANT_GRACE_SECONDS=0.5")
			_, errOut, code := run(t, cmd)
			execDir := filepath.Join(data, "dashboard", "builds", id)
			if code != 0 {
				log, _ := os.ReadFile(filepath.Join(execDir, "runner.log"))
				t.Fatalf("build exit %d: %s\nrunner.log: %s", code, errOut, log)
			}
			var st struct {
				Reason    string          `json:"termination_reason"`
				RunID     string          `json:"run_id"`
				FinalTree string          `json:"final_tree_sha256"`
				Proof     json.RawMessage `json:"proof"`
			}
			raw, err := os.ReadFile(filepath.Join(execDir, "state.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &st); err != nil {
				t.Fatal(err)
			}
			var p struct {
				Present, Bound, Snapshotted bool
				ProofPath                   string `json:"proof_path"`
				Tree                        string `json:"tree_sha256"`
			}
			if err := json.Unmarshal(st.Proof, &p); err != nil {
				t.Fatal(err)
			}
			if st.Reason != tc.reason || p.Bound != tc.bound {
				t.Errorf("termination_reason %q bound %v, want %q %v\nproof: %s", st.Reason, p.Bound, tc.reason, tc.bound, st.Proof)
			}
			if tc.runID == "" {
				// Only a run id minted after the start may bind: the old
				// receipt is not even read.
				if p.Present || p.Snapshotted || st.RunID != "" {
					t.Errorf("stale receipt used: run_id %q proof %s", st.RunID, st.Proof)
				}
				if _, err := os.Stat(filepath.Join(execDir, "proof.json")); err == nil {
					t.Error("stale receipt snapshotted")
				}
				return
			}
			if !p.Present || !p.Snapshotted || p.ProofPath != filepath.Join(execDir, "proof.json") {
				t.Errorf("receipt not snapshotted: %s", st.Proof)
			}
			want, _, _ := run(t, exec.Command(bin, "digest", ws))
			if st.FinalTree+"\n" != want {
				t.Errorf("final_tree_sha256 %q, digest now %q", st.FinalTree, want)
			}
			if tc.bound && p.Tree != st.FinalTree {
				t.Errorf("bound to tree %q, final %q", p.Tree, st.FinalTree)
			}
			if st.RunID != tc.runID {
				t.Errorf("run_id %q, want %q", st.RunID, tc.runID)
			}
			snap, err := os.Stat(p.ProofPath)
			if err != nil || snap.Mode().Perm() != 0o400 {
				t.Fatalf("snapshot: %v %v", snap, err)
			}
			got, _ := os.ReadFile(p.ProofPath)
			src, _ := os.ReadFile(filepath.Join(lokiDir, "proofs", receiptRun, "proof.json"))
			if !bytes.Equal(got, src) {
				t.Error("snapshot differs from the receipt")
			}
		})
	}
}
