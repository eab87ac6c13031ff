package execution

import (
	"context"

	sandboxlandlock "github.com/loki-sh/loki/internal/execution/sandbox/landlock"
	"github.com/loki-sh/loki/internal/execution/sandbox/seatbelt"
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
	r, err := lineage.Start(lineage.Command{Args: c.Args, Dir: c.Dir, Env: c.Env, Stdout: c.Stdout, Stderr: c.Stderr, Landlock: c.Landlock})
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
	return (&treedigest.Options{MaxBytes: digestMaxBytes()}).Digest(ctx, root)
}

// sandbox is macOS Seatbelt or Linux Landlock, each off unless its switch
// (LOKI_HOST_SEATBELT, LOKI_HOST_LANDLOCK) asks for it; each refuses where
// it cannot confine, so asking for either never runs unconfined.
type sandbox struct{}

func (sandbox) Confine(r ConfineRequest) (Confined, error) {
	args, sb, err := seatbelt.Wrap(r.ExecutionDir, r.Args, r.Workspace, r.RunSh, r.Spec)
	if err != nil {
		return Confined{}, err
	}
	if sb != nil {
		return Confined{Args: args, Record: sb}, nil
	}
	ruleset, ll, err := sandboxlandlock.Confine(r.ExecutionDir, r.Workspace, r.RunSh, r.Spec, r.RunnerLog, r.RunDir)
	if err != nil {
		return Confined{}, err
	}
	if ll != nil {
		return Confined{Args: args, Record: ll, Landlock: ruleset}, nil
	}
	return Confined{Args: args}, nil
}
