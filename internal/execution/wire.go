package execution

import (
	"github.com/loki-sh/loki/internal/macos/seatbelt"
	"github.com/loki-sh/loki/internal/proc/lineage"
	"github.com/loki-sh/loki/internal/proof"
	"github.com/loki-sh/loki/internal/proof/treedigest"
)

// Default wires the production collaborators.
func Default() Deps {
	return Deps{
		Start: startTracked,
		EmptyProof: func(id, reason string) Proof {
			b := proof.Empty(id, reason)
			return &b
		},
		SnapshotProof: func(dir, id, lokiDir, runID string) Proof {
			b := proof.Snapshot(dir, id, lokiDir, runID)
			return &b
		},
		TreeDigest: treedigest.Digest,
		Confine:    confine,
	}
}

// startTracked spawns through lineage: a session leader behind an exec
// gate, tracked with its descendants, with a pidfd on Linux.
func startTracked(c Command) (Runner, error) {
	r, err := lineage.Start(lineage.Command{Args: c.Args, Dir: c.Dir, Env: c.Env, Stdout: c.Stdout, Stderr: c.Stderr})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// confine keeps a nil *Confinement from becoming a non-nil interface.
func confine(dir string, args []string, workspace, runSh, spec string) ([]string, any, error) {
	wrapped, c, err := seatbelt.Wrap(dir, args, workspace, runSh, spec)
	if err != nil || c == nil {
		return wrapped, nil, err
	}
	return wrapped, c, nil
}
