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

// Deps are the collaborators of Run, owned by other packages. Production
// code uses Default(); tests may replace single fields.
type Deps struct {
	Start      func(Command) (Runner, error)
	EmptyProof func(executionID, reason string) Proof
	// SnapshotProof reads <lokiDir>/proofs/<runID>/proof.json, snapshots
	// it 0400 into executionDir/proof.json and verifies it; not yet bound.
	SnapshotProof func(executionDir, executionID, lokiDir, runID string) Proof
	TreeDigest    func(ctx context.Context, root string) (string, error)
	// Confine wraps the runner argv (macOS Seatbelt); it returns args
	// unchanged and a nil confinement when confinement is off.
	Confine func(executionDir string, args []string, workspace, runSh, spec string) ([]string, any, error)
}
