//go:build unix

package session

import (
	"io"
	"os"

	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/status"
)

// Backend starts the process that becomes the session: loki-init inside some
// isolation, or (for backends whose Capabilities say Init false) the peer
// itself.
type Backend interface {
	Name() string
	// Capabilities says what the backend gives on this host; the session
	// refuses, before anything starts, a policy asking for more (Admit).
	Capabilities() Capabilities
	// Prepare completes the session once Admit has passed its policy,
	// before anything is created: a backend may fill in the peer (a
	// container image's ENV and WORKDIR, a cwd left empty) and name the
	// user the policy leaves to it (an image's USER, as numbers). It
	// never widens the policy. A failure is the backend's (exit 127).
	Prepare(peer *launch.Spec, p *confine.Policy) error
	Start(req Request) (Process, error)
}

// Request is what a backend is asked to start.
type Request struct {
	// ControlDir is the host path of the session's control dir. A backend
	// exposes it read-only to the init and appends its in-namespace path to
	// InitArgs as loki-init's CONTROL_DIR argument.
	ControlDir string
	// ControlRoot is the host directory holding every session's dir (the
	// control dir is ControlRoot/session-*/control). A backend must not
	// let the peer see it: other sessions' leases are in it.
	ControlRoot string
	// Scratch is a private directory (0700, inside the session dir) for the
	// backend's own files, such as an OCI bundle or a cid file, made by
	// the backend that needs one (MakeScratch). It is removed with the
	// session, and swept like it when its owner was killed. Empty for
	// backends that run no init.
	Scratch string
	// InitArgs are loki-init's flags, without CONTROL_DIR.
	InitArgs []string
	// Peer is the launch spec; only backends without init use it, the others
	// receive it through the prelude on Stdin.
	Peer launch.Spec
	// Confine is the policy the backend must apply in full. Admit has
	// checked it against the backend's Capabilities; what depends on the
	// host at start (a path's modes, a runtime's version) the backend
	// still refuses with an error wrapping confine.ErrUnsupported.
	Confine confine.Policy
	// Stdio for the started process. Backends pass them on as they are.
	Stdin, Stdout, Stderr *os.File
	// TTY: the prelude asks loki-init for a pseudo-terminal, which it
	// opens through /dev/ptmx; the backend must make that a devpts
	// instance private to the session (OCI runtimes and Docker do).
	TTY bool
	// HostStdin, when set, is the client's own stdin, to be passed to the
	// init as the descriptor Capabilities.DirectStdinFD names (the
	// init's stdout and stderr are the client's own already).
	HostStdin *os.File
	// Notes receives the backend's diagnostics while the session runs
	// (egress refusals); never nil.
	Notes io.Writer
	// Status records what the backend refused while the session runs
	// (egress); nil records nothing, and its methods are safe on nil.
	Status *status.Recorder
}

// Process is a started session.
type Process interface {
	// Wait blocks until the started process has exited and returns how.
	Wait() Exit
	// Signal forwards a termination request (the init forwards it to the
	// peer's session and applies its own grace).
	Signal(sig os.Signal) error
	// Kill ends the session now.
	Kill() error
	// Close releases what Start created (runtime state, bundle). It is
	// called once, after Wait.
	Close() error
}

// Exit is how a started process ended.
type Exit struct {
	Code   int   // exit code when Signal is 0
	Signal int   // terminating signal number, 0 when it exited
	Err    error // non-nil: the backend failed before the session began (127)
	// Escaped non-nil: the session ran, but something it started may have
	// outlived it (its lineage could not be observed, or a descendant
	// survived the kill). The run is then reported as failed (125).
	Escaped error
	// Limit non-nil: the session ran into a limit of its cgroup (it
	// wraps confine.ErrMemoryLimit or confine.ErrPidsLimit). The run is
	// then reported as such, never as a clean exit.
	Limit error
}
