package namespace

import (
	"errors"
	"fmt"
)

// StageCommand is the hidden loki-supervise subcommand that runs as PID 1 of
// the new namespace before it execs loki-init.
const StageCommand = "__ns-init"

// Name is the --isolation value of this backend.
const Name = "namespace"

// Sentinel errors.
var (
	ErrUnsupported = errors.New("the namespace backend needs Linux")
	ErrNamespace   = errors.New("cannot create the session namespaces")
	ErrStage       = errors.New("namespace set-up failed")
)

// Backend starts loki-init in a new PID + mount namespace.
type Backend struct {
	// Init is the absolute host path of loki-init.
	Init string
	// Self is the executable that implements StageCommand ("" means
	// /proc/self/exe).
	Self string
	// NoParentDeathSignal disables the SIGKILL-on-parent-death speed-up, so
	// only the lease ends an orphaned session (used to test the lease).
	NoParentDeathSignal bool
	// Warn receives one-line notices (the default pids limit could not
	// be applied).
	Warn func(string)
}

func (b *Backend) Name() string    { return Name }
func (b *Backend) NeedsInit() bool { return true }

// stageArgs is the stage's argv after the subcommand: the control dir, then
// the complete loki-init argv.
func stageArgs(control, init string, initArgs []string) []string {
	out := []string{control, init}
	out = append(out, initArgs...)
	return append(out, control)
}

// parseStageArgs is the inverse of stageArgs.
func parseStageArgs(args []string) (control string, argv []string, err error) {
	if len(args) < 3 {
		return "", nil, fmt.Errorf("%w: want CONTROL_DIR INIT [ARGS...] CONTROL_DIR", ErrStage)
	}
	if args[len(args)-1] != args[0] {
		return "", nil, fmt.Errorf("%w: control dir mismatch", ErrStage)
	}
	return args[0], args[1:], nil
}

// FixHint is the one-line fix printed when the namespaces are refused.
const FixHint = "run as root, allow unprivileged user namespaces (sysctl user.max_user_namespaces / kernel.unprivileged_userns_clone=1), or use --isolation oci or --isolation none"
