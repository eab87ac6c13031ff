package execution

import (
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/loki-sh/loki/internal/execution/state"
)

// BuildOptions are the `build` subcommand's arguments, as given.
type BuildOptions struct {
	ExecutionID, RunSh, Workspace, LokiDir, Spec, Provider string
	Parallel                                               bool
	HardTimeout, IdleTimeout                               time.Duration
}

// PrepareBuild validates a build request and returns its Spec: the runner
// is `run.sh --provider NAME [--parallel] SPEC` with resolved paths. It
// also snapshots the spec into the record as spec.md unless the caller
// (the dashboard) already did.
func PrepareBuild(o BuildOptions) (Spec, error) {
	s, err := ResolveBuild(o)
	if err != nil {
		return Spec{}, err
	}
	store, err := state.DefaultStore()
	if err != nil {
		return Spec{}, err
	}
	if err := checkRecordOutside(store.Root(), s.Workspace, s.LokiDir); err != nil {
		return Spec{}, err
	}
	s.Store = store
	content, err := readSpec(s.SpecFile)
	if err != nil {
		return Spec{}, err
	}
	if err := store.SnapshotSpec(s.ID, content); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// MaxSpecSize bounds the spec a build snapshots: it is read whole, and it
// may lie in a workspace an earlier runner wrote.
const MaxSpecSize = 16 << 20

// readSpec reads the (already resolved) spec: a regular file, opened
// without blocking, at most MaxSpecSize bytes.
func readSpec(path string) ([]byte, error) {
	f, err := state.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("--spec: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSpecSize+1))
	if err != nil {
		return nil, fmt.Errorf("--spec: %w", err)
	}
	if len(b) > MaxSpecSize {
		return nil, fmt.Errorf("--spec: %w: %s is larger than %d MiB", ErrBadPath, path, MaxSpecSize>>20)
	}
	return b, nil
}

// ResolveBuild validates a build request exactly as PrepareBuild does but
// touches nothing: the Spec has no Store and no record exists for it. It
// serves `build --print-profile`.
func ResolveBuild(o BuildOptions) (Spec, error) {
	id, err := state.ParseID(o.ExecutionID)
	if err != nil {
		return Spec{}, fmt.Errorf("--execution-id %q: %w", o.ExecutionID, err)
	}
	if o.Provider == "" {
		return Spec{}, fmt.Errorf("--provider must not be empty")
	}
	var s Spec
	for _, p := range []struct {
		flag, raw string
		kind      Kind
		dst       *string
	}{
		{"--run-sh", o.RunSh, File, &s.RunSh},
		{"--workspace", o.Workspace, Dir, &s.Workspace},
		{"--loki-dir", o.LokiDir, Dir, &s.LokiDir},
		{"--spec", o.Spec, File, &s.SpecFile},
	} {
		if *p.dst, err = ResolvePath(p.flag, p.raw, p.kind); err != nil {
			return Spec{}, err
		}
	}
	if err := checkTimeouts(o.HardTimeout, o.IdleTimeout); err != nil {
		return Spec{}, err
	}
	s.ID = id
	s.Args = []string{s.RunSh, "--provider", o.Provider}
	if o.Parallel {
		s.Args = append(s.Args, "--parallel")
	}
	s.Args = append(s.Args, s.SpecFile)
	s.HardTimeout, s.IdleTimeout = o.HardTimeout, o.IdleTimeout
	return s, nil
}

// RunOptions are the `run` subcommand's arguments.
type RunOptions struct {
	ExecutionID, Workspace, LokiDir string
	Args                            []string
	HardTimeout, IdleTimeout        time.Duration
}

// PrepareRun validates a generic run. Without an id a new random UUID is
// minted; the workspace defaults to the current directory. Without a loki
// dir the run gets its own in its record (Run makes it): nothing is
// written into the workspace but by the command.
func PrepareRun(o RunOptions) (Spec, error) {
	if len(o.Args) == 0 || o.Args[0] == "" {
		return Spec{}, fmt.Errorf("no command given (usage: run [flags] -- CMD ARGS...)")
	}
	var id state.ID
	var err error
	if o.ExecutionID == "" {
		id = NewID()
	} else if id, err = state.ParseID(o.ExecutionID); err != nil {
		return Spec{}, fmt.Errorf("--execution-id %q: %w", o.ExecutionID, err)
	}
	ws := o.Workspace
	if ws == "" {
		if ws, err = os.Getwd(); err != nil {
			return Spec{}, fmt.Errorf("--workspace: %w", err)
		}
	}
	var s Spec
	if s.Workspace, err = ResolvePath("--workspace", ws, Dir); err != nil {
		return Spec{}, err
	}
	if o.LokiDir != "" {
		if s.LokiDir, err = ResolvePath("--loki-dir", o.LokiDir, Dir); err != nil {
			return Spec{}, err
		}
	}
	if err := checkTimeouts(o.HardTimeout, o.IdleTimeout); err != nil {
		return Spec{}, err
	}
	store, err := state.DefaultStore()
	if err != nil {
		return Spec{}, err
	}
	if err := checkRecordOutside(store.Root(), s.Workspace, s.LokiDir); err != nil {
		return Spec{}, err
	}
	if _, err := store.Read(id); err == nil {
		return Spec{}, fmt.Errorf("execution %s already exists", id)
	}
	s.ID, s.Store, s.Args, s.Plain = id, store, o.Args, true
	s.HardTimeout, s.IdleTimeout = o.HardTimeout, o.IdleTimeout
	return s, nil
}

func checkTimeouts(hard, idle time.Duration) error {
	if hard < 0 || idle < 0 {
		return fmt.Errorf("--hard-timeout and --idle-timeout must not be negative")
	}
	return nil
}

// NewID mints a random (version 4) execution id.
func NewID() state.ID {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return state.MustParseID(fmt.Sprintf("%x", b))
}
