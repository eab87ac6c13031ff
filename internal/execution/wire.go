package execution

import (
	"context"

	"github.com/loki-sh/loki/internal/macos/seatbelt"
	"github.com/loki-sh/loki/internal/proc/lineage"
	"github.com/loki-sh/loki/internal/proof"
	"github.com/loki-sh/loki/internal/proof/treedigest"
)

// Default wires the production collaborators.
func Default() Deps {
	return Deps{Spawner: tracked{}, Proofs: proofs{}, Digester: digester{}, Confiner: sandbox{}}
}

// tracked spawns through lineage: a session leader behind an exec gate,
// tracked with its descendants, with a pidfd on Linux.
type tracked struct{}

func (tracked) Start(c Command) (Runner, error) {
	r, err := lineage.Start(lineage.Command{Args: c.Args, Dir: c.Dir, Env: c.Env, Stdout: c.Stdout, Stderr: c.Stderr})
	if err != nil {
		return nil, err // not a typed-nil Runner
	}
	return r, nil
}

type proofs struct{}

func (proofs) Empty(executionID, reason string) Proof {
	b := proof.Empty(executionID, reason)
	return &b
}

func (proofs) Snapshot(s ProofSource) Proof {
	b := proof.Snapshot(s.ExecutionDir, s.ExecutionID, s.LokiDir, s.RunID)
	return &b
}

type digester struct{}

func (digester) TreeDigest(ctx context.Context, root string) (string, error) {
	return treedigest.Digest(ctx, root)
}

// sandbox is macOS Seatbelt, off unless LOKI_HOST_SEATBELT asks for it.
type sandbox struct{}

func (sandbox) Confine(r ConfineRequest) ([]string, *seatbelt.Confinement, error) {
	return seatbelt.Wrap(r.ExecutionDir, r.Args, r.Workspace, r.RunSh, r.Spec)
}
