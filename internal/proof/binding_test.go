package proof

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/loki-sh/loki/internal/canonjson"
)

const (
	receiptRunID = "run-20261202-7f3a"
	receiptTree  = "3b9f0c1e5d7a2b4c6e8f0a1b3c5d7e9f1a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1d"
)

// layout makes a loki dir holding proofs/<runID>/proof.json and an
// execution dir (0700) for the snapshot.
func layout(t *testing.T, runID string, receipt []byte) (lokiDir, execDir string) {
	t.Helper()
	lokiDir = t.TempDir()
	execDir = filepath.Join(t.TempDir(), "exec")
	if err := os.Mkdir(execDir, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(lokiDir, "proofs", runID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if receipt != nil {
		if err := os.WriteFile(filepath.Join(dir, "proof.json"), receipt, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return lokiDir, execDir
}

func TestSnapshotValidReceipt(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	raw := testdata(t, "receipt.valid.json")
	lokiDir, execDir := layout(t, receiptRunID, raw)
	b := Snapshot(execDir, "exec-1", lokiDir, receiptRunID)
	sum := sha256.Sum256(raw)
	snap := filepath.Join(execDir, "proof.json")
	want := `{"bound":false,"document_sha256":"` + hex.EncodeToString(sum[:]) + `",` +
		`"execution":{"exit_code":0,"outcome":"completed","run_status":"deterministic_gates_passed","terminated":false},` +
		`"failed_quality_gates":[],"headline":"VERIFIED",` +
		`"integrity":{"cost_coherent":true,"degraded":[],"generator_trusted":true,"gpg_ok":"n/a","hash_ok":true,"headline_consistent":true,"ok":true,"reason":"","reasons":[]},` +
		`"present":true,"proof_path":"` + snap + `","proof_url":"/api/control/builds/exec-1/proof","run_id":"` + receiptRunID + `",` +
		`"snapshot_error":"","snapshotted":true,"tree_fields_agree":true,"tree_sha256":"` + receiptTree + `"}`
	if got, _ := canonjson.Marshal(b); string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	fi, err := os.Stat(snap)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o400 {
		t.Errorf("snapshot mode %v, want 0400", fi.Mode().Perm())
	}
	if got, _ := os.ReadFile(snap); !bytes.Equal(got, raw) {
		t.Error("snapshot bytes differ from the receipt")
	}
	b.Bind(receiptRunID, receiptTree)
	if !b.Bound || !b.Completed(0) {
		t.Errorf("bound=%v completed=%v, want both true", b.Bound, b.Completed(0))
	}
	// A second snapshot replaces the first (0400) one.
	if b2 := Snapshot(execDir, "exec-1", lokiDir, receiptRunID); !b2.Snapshotted || b2.SnapshotError != "" {
		t.Errorf("re-snapshot: %+v", b2)
	}
}

func TestSnapshotRefusals(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	raw := testdata(t, "receipt.valid.json")
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) (lokiDir, execDir, runID string)
		check func(t *testing.T, b Binding)
	}{
		{"no run id", func(t *testing.T) (string, string, string) {
			l, e := layout(t, receiptRunID, raw)
			return l, e, ""
		}, notPresent},
		{"run id not minted by a build", func(t *testing.T) (string, string, string) {
			l, e := layout(t, "build-1", raw)
			return l, e, "build-1"
		}, notPresent},
		{"run id escaping proofs", func(t *testing.T) (string, string, string) {
			l, e := layout(t, receiptRunID, raw)
			return l, e, "run-x/../../" + receiptRunID
		}, notPresent},
		{"receipt absent", func(t *testing.T) (string, string, string) {
			l, e := layout(t, receiptRunID, nil)
			return l, e, receiptRunID
		}, notPresent},
		{"receipt is a symlink", func(t *testing.T) (string, string, string) {
			l, e := layout(t, receiptRunID, nil)
			target := writeTemp(t, raw)
			if err := os.Symlink(target, filepath.Join(l, "proofs", receiptRunID, "proof.json")); err != nil {
				t.Fatal(err)
			}
			return l, e, receiptRunID
		}, notPresent},
		{"run dir is a symlink", func(t *testing.T) (string, string, string) {
			elsewhere, _ := layout(t, receiptRunID, raw)
			l, e := layout(t, "run-other", nil)
			if err := os.Symlink(filepath.Join(elsewhere, "proofs", receiptRunID), filepath.Join(l, "proofs", receiptRunID)); err != nil {
				t.Fatal(err)
			}
			return l, e, receiptRunID
		}, notPresent},
		{"snapshot cannot be written", func(t *testing.T) (string, string, string) {
			l, e := layout(t, receiptRunID, raw)
			return l, filepath.Join(e, "missing"), receiptRunID
		}, func(t *testing.T, b Binding) {
			if !b.Present || b.Snapshotted || b.SnapshotError != "FileNotFoundError: snapshot write failed" || b.ProofPath != "" {
				t.Errorf("present=%v snapshotted=%v error=%q path=%q", b.Present, b.Snapshotted, b.SnapshotError, b.ProofPath)
			}
			if !b.Integrity.OK {
				t.Error("the receipt itself is fine; integrity should be ok")
			}
			b.Bind(receiptRunID, receiptTree)
			if b.Bound {
				t.Error("bound without a snapshot")
			}
		}},
		{"malformed receipt", func(t *testing.T) (string, string, string) {
			l, e := layout(t, receiptRunID, raw[:len(raw)/2])
			return l, e, receiptRunID
		}, func(t *testing.T, b Binding) {
			if b.Present || !b.Snapshotted || b.DocumentSHA256 == "" || b.Integrity.Reason() != "receipt malformed: not valid JSON" {
				t.Errorf("present=%v snapshotted=%v sha=%q reason=%q", b.Present, b.Snapshotted, b.DocumentSHA256, b.Integrity.Reason())
			}
		}},
		{"non-object receipt", func(t *testing.T) (string, string, string) {
			l, e := layout(t, receiptRunID, testdata(t, "receipt.array.json"))
			return l, e, receiptRunID
		}, func(t *testing.T, b Binding) {
			if b.Present || b.Integrity.Reason() != "receipt malformed: the root is not a JSON object" {
				t.Errorf("present=%v reason=%q", b.Present, b.Integrity.Reason())
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, e, id := tc.setup(t)
			b := Snapshot(e, "exec-1", l, id)
			tc.check(t, b)
			b.Bind(id, receiptTree)
			if b.Bound {
				t.Error("bound")
			}
		})
	}
}

func notPresent(t *testing.T, b Binding) {
	t.Helper()
	if b.Present || b.Snapshotted || b.DocumentSHA256 != "" {
		t.Errorf("present=%v snapshotted=%v sha=%q", b.Present, b.Snapshotted, b.DocumentSHA256)
	}
}

// boundBinding is a binding that Bind(receiptRunID, receiptTree) binds
// and that completes with returncode 0.
func boundBinding() Binding {
	yes := true
	return Binding{
		Present: true, Snapshotted: true, RunID: receiptRunID, TreeSHA256: receiptTree,
		TreeFieldsAgree: true, Headline: Verified,
		Execution:          map[string]any{"exit_code": 0, "run_status": "council_approved"},
		FailedQualityGates: []string{},
		Integrity:          Integrity{Checked: true, HashOK: true, OK: true, HeadlineConsistent: &yes},
	}
}

// TestBindEveryCondition: the baseline binds; each condition flipped alone
// unbinds.
func TestBindEveryCondition(t *testing.T) {
	no := false
	for _, tc := range []struct {
		name   string
		mutate func(b *Binding) (runID, tree string)
		bound  bool
	}{
		{"baseline", func(b *Binding) (string, string) { return receiptRunID, receiptTree }, true},
		{"not present", func(b *Binding) (string, string) { b.Present = false; return receiptRunID, receiptTree }, false},
		{"not snapshotted", func(b *Binding) (string, string) { b.Snapshotted = false; return receiptRunID, receiptTree }, false},
		{"other run id", func(b *Binding) (string, string) { return "run-other", receiptTree }, false},
		{"no run id minted", func(b *Binding) (string, string) { b.RunID = ""; return "", receiptTree }, false},
		{"other tree", func(b *Binding) (string, string) { return receiptRunID, receiptTree[:63] + "e" }, false},
		{"no final tree", func(b *Binding) (string, string) { b.TreeSHA256 = ""; return receiptRunID, "" }, false},
		{"tree fields disagree", func(b *Binding) (string, string) { b.TreeFieldsAgree = false; return receiptRunID, receiptTree }, false},
		{"integrity not ok", func(b *Binding) (string, string) { b.Integrity.OK = false; return receiptRunID, receiptTree }, false},
		{"headline inconsistent", func(b *Binding) (string, string) {
			b.Integrity.HeadlineConsistent = &no
			return receiptRunID, receiptTree
		}, false},
		{"headline not checked", func(b *Binding) (string, string) {
			b.Integrity.HeadlineConsistent = nil
			return receiptRunID, receiptTree
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := boundBinding()
			runID, tree := tc.mutate(&b)
			b.Bind(runID, tree)
			if b.Bound != tc.bound {
				t.Errorf("bound = %v, want %v", b.Bound, tc.bound)
			}
		})
	}
}

// TestCompletedEveryCondition: the baseline completes; each condition
// flipped alone does not.
func TestCompletedEveryCondition(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mutate    func(b *Binding) int
		completed bool
	}{
		{"baseline", func(b *Binding) int { return 0 }, true},
		{"runner exit 1", func(b *Binding) int { return 1 }, false},
		{"runner exit 20", func(b *Binding) int { return 20 }, false},
		{"not bound", func(b *Binding) int { b.Bound = false; return 0 }, false},
		{"headline with gaps", func(b *Binding) int { b.Headline = VerifiedWithGaps; return 0 }, false},
		{"receipt exit code 2", func(b *Binding) int { b.Execution["exit_code"] = 2; return 0 }, false},
		{"receipt exit code absent", func(b *Binding) int { delete(b.Execution, "exit_code"); return 0 }, false},
		{"receipt exit code null", func(b *Binding) int { b.Execution["exit_code"] = nil; return 0 }, false},
		{"run status failed", func(b *Binding) int { b.Execution["run_status"] = "failed"; return 0 }, false},
		{"run status unknown", func(b *Binding) int { b.Execution["run_status"] = "done"; return 0 }, false},
		{"run status absent", func(b *Binding) int { delete(b.Execution, "run_status"); return 0 }, false},
		{"failed gate", func(b *Binding) int { b.FailedQualityGates = []string{"lint"}; return 0 }, false},
		{"every accepted status", func(b *Binding) int { b.Execution["run_status"] = "reuse_already_satisfied"; return 0 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := boundBinding()
			b.Bind(receiptRunID, receiptTree)
			rc := tc.mutate(&b)
			if got := b.Completed(rc); got != tc.completed {
				t.Errorf("completed = %v, want %v", got, tc.completed)
			}
		})
	}
}

// TestTreeFields: the top-level tree wins; the two must agree when both
// are present.
func TestTreeFields(t *testing.T) {
	a, c := receiptTree, receiptTree[:63]+"0"
	for _, tc := range []struct {
		name      string
		top, fact string
		tree      string
		agree     bool
	}{
		{"both equal", a, a, a, true},
		{"top only", a, "", a, true},
		{"facts only", "", a, a, true},
		{"neither", "", "", "", true},
		{"differ", a, c, a, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := map[string]any{"facts": map[string]any{"git": map[string]any{}}}
			if tc.top != "" {
				doc["tree_sha256"] = tc.top
			}
			if tc.fact != "" {
				doc["facts"].(map[string]any)["git"].(map[string]any)["tree_sha256"] = tc.fact
			}
			var b Binding
			b.fill(doc, Integrity{})
			if b.TreeSHA256 != tc.tree || b.TreeFieldsAgree != tc.agree {
				t.Errorf("tree=%q agree=%v, want %q %v", b.TreeSHA256, b.TreeFieldsAgree, tc.tree, tc.agree)
			}
		})
	}
}

func TestPyStr(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, ""}, {"", ""}, {"run-1", "run-1"}, {false, ""}, {true, "True"},
		{0, ""}, {7, "7"}, {1.5, "1.5"}, {map[string]any{}, ""}, {[]any{}, ""},
	} {
		if got := pyStr(tc.in); got != tc.want {
			t.Errorf("pyStr(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
