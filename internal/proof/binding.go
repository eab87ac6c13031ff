package proof

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/loki-sh/loki/internal/canonjson"
	"github.com/loki-sh/loki/internal/pycompat"
	"github.com/loki-sh/loki/internal/safefile"
)

// SnapshotName is the receipt's file name, in the proofs directory and in
// the execution record.
const SnapshotName = "proof.json"

// acceptedRunStatuses are the execution.run_status values of a run whose
// work was accepted; only these can complete an execution.
var acceptedRunStatuses = map[string]bool{
	"deterministic_gates_passed":   true,
	"council_approved":             true,
	"council_force_approved":       true,
	"completion_promise_fulfilled": true,
	"reuse_already_satisfied":      true,
}

// Binding is the "proof" object of state.json.
type Binding struct {
	Present            bool
	RunID              string // the receipt's run_id
	Headline           string
	TreeSHA256         string // the receipt's tree (top-level, else facts.git)
	DocumentSHA256     string // SHA-256 of the exact receipt bytes
	ProofPath          string // the 0400 snapshot, once written
	ProofURL           string
	Snapshotted        bool
	SnapshotError      string
	TreeFieldsAgree    bool
	Execution          map[string]any // facts.execution as the receipt has it
	FailedQualityGates []string
	Integrity          Integrity
	Bound              bool
}

// JSONValue is the object with the reference's field names.
func (b Binding) JSONValue() any {
	exec := b.Execution
	if exec == nil {
		exec = map[string]any{}
	}
	return map[string]any{
		"present":              b.Present,
		"run_id":               b.RunID,
		"headline":             b.Headline,
		"tree_sha256":          b.TreeSHA256,
		"document_sha256":      b.DocumentSHA256,
		"proof_path":           b.ProofPath,
		"proof_url":            b.ProofURL,
		"snapshotted":          b.Snapshotted,
		"snapshot_error":       b.SnapshotError,
		"tree_fields_agree":    b.TreeFieldsAgree,
		"execution":            exec,
		"failed_quality_gates": nonNil(b.FailedQualityGates),
		"integrity":            b.Integrity,
		"bound":                b.Bound,
	}
}

// MarshalJSON gives encoding/json callers the same object.
func (b Binding) MarshalJSON() ([]byte, error) { return canonjson.Marshal(b.JSONValue()) }

// Empty is the binding of an execution without a usable receipt.
func Empty(executionID, reason string) Binding {
	return Binding{
		ProofURL:           "/api/control/builds/" + executionID + "/proof",
		Execution:          map[string]any{},
		FailedQualityGates: []string{},
		Integrity:          EmptyIntegrity(reason),
	}
}

// validRunID is the shape of a run id minted by the build: "run-..." and a
// single path component.
func validRunID(id string) bool {
	return strings.HasPrefix(id, "run-") && !strings.ContainsAny(id, "/\\\x00") && id != "run-." && id != "run-.."
}

// Snapshot reads <lokiDir>/proofs/<runID>/proof.json, copies its exact
// bytes to <executionDir>/proof.json (0400), then parses and verifies
// them. The result is never Bound: Bind decides that against the tree.
func Snapshot(executionDir, executionID, lokiDir, runID string) Binding {
	b := Empty(executionID, "proof not present")
	if !validRunID(runID) {
		return b
	}
	if err := realDirs(lokiDir, "proofs", runID); err != nil {
		return b
	}
	src := filepath.Join(lokiDir, "proofs", runID, SnapshotName)
	raw, err := readLimited(src)
	if err != nil {
		return b
	}
	sum := sha256.Sum256(raw)
	b.DocumentSHA256 = hex.EncodeToString(sum[:])
	dst := filepath.Join(executionDir, SnapshotName)
	if err := safefile.Replace(dst, raw, 0o400); err != nil {
		b.SnapshotError = pycompat.ErrorClass(err, "OSError") + ": snapshot write failed"
	} else {
		b.ProofPath, b.Snapshotted = dst, true
	}
	doc, err := parse(raw)
	if err != nil {
		b.Integrity = EmptyIntegrity(err.Error())
		return b
	}
	b.fill(doc, Verify(doc, Signature{Data: raw, Sig: signatureNextTo(src)}))
	return b
}

// parse decodes receipt bytes as Python's json.loads would and requires an
// object at the root.
func parse(raw []byte) (map[string]any, error) {
	v, err := canonjson.Decode(raw)
	if err != nil {
		if errors.Is(err, canonjson.ErrLoneSurrogate) {
			return nil, fmt.Errorf("%w: it has a lone UTF-16 surrogate escape", ErrMalformed)
		}
		return nil, fmt.Errorf("%w: not valid JSON", ErrMalformed)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: the root is not a JSON object", ErrMalformed)
	}
	return doc, nil
}

// fill records what a parsed receipt claims, following the reference's
// reading of it.
func (b *Binding) fill(doc map[string]any, in Integrity) {
	facts := obj(doc, "facts")
	git := obj(facts, "git")
	honesty := obj(doc, "honesty")
	b.Present = true
	b.Integrity = in
	b.RunID = pyStr(doc["run_id"])
	factsTree := pyStr(git["tree_sha256"])
	topTree := pyStr(doc["tree_sha256"])
	b.TreeSHA256 = topTree
	if b.TreeSHA256 == "" {
		b.TreeSHA256 = factsTree
	}
	b.TreeFieldsAgree = topTree == "" || factsTree == "" || topTree == factsTree
	b.Headline = pyStr(doc["headline"])
	if b.Headline == "" {
		b.Headline = pyStr(honesty["headline"])
	}
	b.Execution = obj(facts, "execution")
	if b.Execution == nil {
		b.Execution = map[string]any{}
	}
	b.FailedQualityGates = []string{}
	for _, g := range gates(facts) {
		if s, _ := g["status"].(string); s == "failed" {
			b.FailedQualityGates = append(b.FailedQualityGates, pyStr(g["name"]))
		}
	}
}

// pyStr is Python's str(value or ""): "" for any falsy value, the string
// itself, a number as Python prints it, "True" for true. Containers
// (never a valid id or digest) become their canonical JSON.
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return ""
	}
	if isZero(v) {
		return ""
	}
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return ""
	}
	if a, ok := v.([]any); ok && len(a) == 0 {
		return ""
	}
	out, err := canonjson.Marshal(v)
	if err != nil {
		return ""
	}
	return string(out)
}

// Bind decides Bound against the run id minted after the start and the
// digest of the final tree. Every condition must hold.
func (b *Binding) Bind(runID, treeSHA256 string) {
	consistent := b.Integrity.HeadlineConsistent != nil && *b.Integrity.HeadlineConsistent
	b.Bound = b.Present &&
		b.Snapshotted &&
		runID != "" && b.RunID == runID &&
		treeSHA256 != "" && b.TreeSHA256 == treeSHA256 &&
		b.TreeFieldsAgree &&
		b.Integrity.OK &&
		consistent
}

// Completed reports whether a runner exit with returncode completes the
// execution: exit 0, bound, headline VERIFIED, an accepted run status and
// exit code 0 in the receipt, no failed quality gate.
func (b Binding) Completed(returncode int) bool {
	status, _ := b.Execution["run_status"].(string)
	code, hasCode := b.Execution["exit_code"]
	return returncode == 0 &&
		b.Bound &&
		b.Headline == Verified &&
		hasCode && isZero(code) &&
		acceptedRunStatuses[status] &&
		len(b.FailedQualityGates) == 0
}

// VerifyFile reads, parses and verifies a receipt file on its own (with
// the signature beside it, if any): ErrUnreadable or ErrMalformed when it
// cannot be verified at all.
func VerifyFile(path string) (Integrity, error) {
	raw, err := readLimited(path)
	if err != nil {
		return Integrity{}, err
	}
	doc, err := parse(raw)
	if err != nil {
		return Integrity{}, err
	}
	return Verify(doc, Signature{Data: raw, Sig: signatureNextTo(path)}), nil
}
