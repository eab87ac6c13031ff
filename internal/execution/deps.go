package execution

import (
	"context"
	"os"
	"time"

	"github.com/loki-sh/loki/internal/proc/lineage"
	"github.com/loki-sh/loki/internal/proc/procid"
)

// Command is what the supervisor asks its spawner to start.
type Command struct {
	Args           []string
	Dir            string
	Env            []string
	Stdout, Stderr *os.File // stdin is /dev/null
	// Landlock is a ruleset the runner is started under (Linux), or nil.
	Landlock *os.File
}

// Runner is the spawned, tracked runner (lineage.Runner in production).
type Runner interface {
	PID() int
	Identity() procid.Identity
	Hold() (release func(), alive bool) // see procid.Group.Hold
	Done() <-chan struct{}
	Status() (code int, signal int)
	Refresh() error
	Reconcile(grace time.Duration) lineage.Outcome
	Close() error
}

// Proof is a proof binding (proof.Binding in production). It is stored in
// state.json through its JSON encoding.
type Proof interface {
	Bind(runID, treeSHA256 string)
	Completed(returncode int) bool
}

// Spawner starts the runner (lineage in production).
type Spawner interface {
	Start(Command) (Runner, error)
}

// ProofSource names the proof an execution's run left behind.
type ProofSource struct {
	ExecutionDir, ExecutionID, LokiDir, RunID string
}

// Proofs makes the record's proof bindings (package proof in production).
type Proofs interface {
	// Empty is a binding that says why there is no proof.
	Empty(executionID, reason string) Proof
	// Snapshot reads <LokiDir>/proofs/<RunID>/proof.json, snapshots it
	// 0400 into ExecutionDir/proof.json and verifies it; not yet bound.
	Snapshot(ProofSource) Proof
}

// TreeDigester digests the workspace the proof must match (treedigest in
// production).
type TreeDigester interface {
	TreeDigest(ctx context.Context, root string) (string, error)
}

// ConfineRequest is what the runner's confinement is made from.
type ConfineRequest struct {
	ExecutionDir string
	Args         []string // the runner argv to wrap
	Workspace    string
	RunSh, Spec  string // empty for a run
	RunnerLog    string // the runner's stdout and stderr, already open
	// RunDir is a run's own loki dir in its record (its TMPDIR and
	// caches), writable to the runner; empty when the caller named one.
	RunDir string
}

// Confined is the runner as its confinement leaves it.
type Confined struct {
	Args []string // the argv to start (wrapped, for Seatbelt)
	// Record is state.json's confinement, nil when the runner is not
	// confined.
	Record any
	// Landlock is a ruleset the runner must be started under (Linux); the
	// supervisor closes it once the runner is started.
	Landlock *os.File
}

// Confiner confines the runner (macOS Seatbelt or Linux Landlock in
// production). When confinement is off it returns the args unchanged and
// no record; otherwise the record is written to state.json before the
// runner starts. An error means the runner must not start.
type Confiner interface {
	Confine(ConfineRequest) (Confined, error)
}

// Deps are the collaborators of Run, owned by other packages. Production
// code uses Default(); tests may replace single ones.
type Deps struct {
	Spawner  Spawner
	Proofs   Proofs
	Digester TreeDigester
	Confiner Confiner
}
