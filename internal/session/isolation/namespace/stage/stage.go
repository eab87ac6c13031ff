package stage

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/loki-sh/loki/internal/session/confine"
)

// Command is loki-init's hidden first argument that makes it the stage.
const Command = "__stage"

// StatusFD is the stage's end of the status pipe (ExtraFiles[0]): a
// failure's reason, or EOF once the stage is done.
const StatusFD = 3

// HostStdinFD is the client's own stdin in the stage and in loki-init
// (ExtraFiles[1]) when the session passes it (Policy.HostStdin).
const HostStdinFD = 4

// PolicyEnv carries the Policy (Policy.Encode) to the stage; loki-init
// gets no environment.
const PolicyEnv = "LOKI_STAGE_CONFINE"

// RuntimeEnv is the rest of the stage's environment: the Go runtime
// starts with one P. With more, it starts a thread for every P it wakes
// while it starts, the stage and loki-init run one goroutine at a time
// anyway, and every thread more is one more for each all-threads call of
// the privilege drop to signal. loki-init takes two Ps at the peer's
// spawn (pid1), as it does on a one-CPU host; the environment is cleared
// before loki-init runs, and the peer's comes from the prelude.
const RuntimeEnv = "GOMAXPROCS=1"

// Policy is the confinement as the stage applies it: the cwd added to
// Write, and Read: paths under /tmp shown read-only in the private one
// (the agent's executable).
type Policy struct {
	confine.Policy
	Read []string
	// TTY: the peer gets a terminal, so /dev/pts must be the session's
	// own devpts (the confined /dev has one; the host's /dev does not).
	TTY bool
	// HostStdin: HostStdinFD is the client's stdin, kept for loki-init.
	HostStdin bool
	// EgressFD > 0: the unix socket the egress proxy's listener is sent
	// back over, once made in the session's network namespace.
	EgressFD int
	// NotifyFD > 0: the unix socket the syscall policy's listener is
	// sent back over (seccomp.SendListener): the policy's denials are
	// then answered by the supervisor, which reports them.
	NotifyFD int
	// PrivateUser: the stage runs in a user namespace of the private
	// block, as the host's uid 0 until it becomes root of it; IDMap are
	// the trees it receives on IDMapFD.
	PrivateUser bool
	IDMap       []IDMapTree
	IDMapFD     int
	// Late is what the supervisor reads of the host while the stage
	// starts; it comes on LateFD (Late.Encode, then EOF) before the
	// stage mounts anything.
	Late   Late
	LateFD int
	// Cgroup is the session's cgroup the supervisor started the stage
	// in (nil: the session has none). The stage checks it is there
	// before it does anything else.
	Cgroup *Cgroup
}

// Late is the part of the policy read from the host beside the stage's
// start.
type Late struct {
	// Mask are the host's sockets found at the start (sockdiag) that
	// the confined fs covers, unless a private dir or a writable path
	// holds them or --socket names them.
	Mask []string
	// OtherRoots are other sessions' control roots (or the default
	// ones) the peer could see: each is covered by an empty tmpfs, as
	// its own control root is.
	OtherRoots []string
}

// Cgroup names the session's cgroup as /proc/self/cgroup shows it.
type Cgroup struct {
	// Name is the last element of its path in each hierarchy.
	Name string
	// V1 are the controllers of the v1 hierarchies that hold it; none:
	// the v2 hierarchy ("0::").
	V1 []string
}

// Holds checks that self, a process's /proc/PID/cgroup, places it in
// the cgroup in each of its hierarchies.
func (c Cgroup) Holds(self string) error {
	if c.Name == "" {
		return errors.New("no cgroup name")
	}
	want := c.V1
	if len(want) == 0 {
		want = []string{""}
	}
	for _, ctrl := range want {
		path, found := "", false
		for _, line := range strings.Split(self, "\n") {
			f := strings.SplitN(line, ":", 3)
			if len(f) != 3 {
				continue
			}
			if (ctrl == "" && f[0] == "0" && f[1] == "") || (ctrl != "" && slices.Contains(strings.Split(f[1], ","), ctrl)) {
				path, found = f[2], true
				break
			}
		}
		what := ctrl
		if what == "" {
			what = "unified"
		}
		if !found {
			return fmt.Errorf("not in any %s cgroup", what)
		}
		if path == "/" || path[strings.LastIndexByte(path, '/')+1:] != c.Name {
			return fmt.Errorf("started in %s cgroup %s, not in the session's %s", what, path, c.Name)
		}
	}
	return nil
}

// IDMapTree is one host path the stage attaches as an idmapped mount
// (made by the supervisor, which alone can).
type IDMapTree struct {
	Path string
	RO   bool
}

// Args is the stage's argv after Command: the control dir, then the
// complete loki-init argv, then the control dir again.
func Args(control, init string, initArgs []string) []string {
	out := []string{control, init}
	out = append(out, initArgs...)
	return append(out, control)
}

// ParseArgs is the inverse of Args.
func ParseArgs(args []string) (control string, argv []string, err error) {
	if len(args) < 3 {
		return "", nil, errors.New("want CONTROL_DIR INIT [ARGS...] CONTROL_DIR")
	}
	if args[len(args)-1] != args[0] {
		return "", nil, errors.New("control dir mismatch")
	}
	return args[0], args[1:], nil
}
