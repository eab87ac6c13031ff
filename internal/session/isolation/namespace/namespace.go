package namespace

import "errors"

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
	// Init is the absolute host path of loki-init, which also runs the
	// stage (package stage).
	Init string
	// NoParentDeathSignal disables the SIGKILL-on-parent-death speed-up, so
	// only the lease ends an orphaned session (used to test the lease).
	NoParentDeathSignal bool
	// Warn receives one-line notices (the default pids limit could not
	// be applied).
	Warn func(string)
}

func (b *Backend) Name() string { return Name }

// FixHint is the one-line fix printed when the namespaces are refused.
const FixHint = "run as root, allow unprivileged user namespaces (sysctl user.max_user_namespaces / kernel.unprivileged_userns_clone=1), or use --isolation oci or --isolation none"
