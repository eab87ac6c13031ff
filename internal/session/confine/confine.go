package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Sentinel errors.
var (
	// ErrPolicy is a flag value that does not parse.
	ErrPolicy = errors.New("invalid confinement")
	// ErrUnsupported is a policy the chosen backend or host cannot apply.
	ErrUnsupported = errors.New("confinement not available")
)

// Network is how much network the peer gets.
type Network string

const (
	// NetworkHost shares the host's network namespace (the default:
	// agents need their model API).
	NetworkHost Network = "host"
	// NetworkNone is a new network namespace whose loopback stays down:
	// no address at all is reachable, not even 127.0.0.1.
	NetworkNone Network = "none"
	// NetworkLoopback is a new network namespace with lo up: the peer
	// reaches its own listeners on 127.0.0.1 and ::1, nothing else.
	NetworkLoopback Network = "loopback"
)

// ParseNetwork parses a --network value; "" is host.
func ParseNetwork(s string) (Network, error) {
	switch n := Network(s); n {
	case "":
		return NetworkHost, nil
	case NetworkHost, NetworkNone, NetworkLoopback:
		return n, nil
	}
	return "", fmt.Errorf("%w: --network %q: want host, none or loopback", ErrPolicy, s)
}

// Private reports whether the peer gets a network namespace of its own.
func (n Network) Private() bool { return n == NetworkNone || n == NetworkLoopback }

// User is the uid and gid the peer (and loki-init, which runs as it) get.
type User struct {
	UID, GID uint32
}

// ParseUser parses UID[:GID] (numbers only: names would be resolved
// against the host's passwd, not the container's). A missing GID is the
// UID.
func ParseUser(s string) (*User, error) {
	if s == "" {
		return nil, nil
	}
	uidS, gidS, hasGID := strings.Cut(s, ":")
	uid, err := strconv.ParseUint(uidS, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("%w: --user %q: want UID[:GID] as numbers", ErrPolicy, s)
	}
	gid := uid
	if hasGID {
		if gid, err = strconv.ParseUint(gidS, 10, 32); err != nil {
			return nil, fmt.Errorf("%w: --user %q: want UID[:GID] as numbers", ErrPolicy, s)
		}
	}
	if uid == 1<<32-1 || gid == 1<<32-1 {
		return nil, fmt.Errorf("%w: --user %q: %d is not a valid id", ErrPolicy, s, uint32(1<<32-1))
	}
	return &User{UID: uint32(uid), GID: uint32(gid)}, nil
}

func (u User) String() string { return fmt.Sprintf("%d:%d", u.UID, u.GID) }

// FS is how much of the host's filesystem the peer may write.
type FS string

const (
	// FSConfined (the default): the host's mounts read-only, writable
	// only the session's cwd and Write, a private /tmp, a minimal /dev,
	// Hide covered.
	FSConfined FS = "confined"
	// FSHost leaves the host's filesystem as the peer's uid may use it
	// (the kernel files stay read-only).
	FSHost FS = "host"
)

// ParseFS parses a --fs value; "" is the backend's default (confined
// wherever the backend can confine: namespace, oci, docker; host for
// none, which cannot).
func ParseFS(s string) (FS, error) {
	switch f := FS(s); f {
	case "", FSConfined, FSHost:
		return f, nil
	}
	return "", fmt.Errorf("%w: --fs %q: want confined or host", ErrPolicy, s)
}

// Policy is one session's confinement. The zero value is the default:
// the supervisor's own user, the host's network, the backend's default
// filesystem (confined, with only the cwd writable, where it can).
type Policy struct {
	// User, when set, is who the peer runs as; nil keeps the
	// supervisor's uid and gid.
	User *User
	// UserNS: whether the peer gets a user namespace of its own
	// (userns.go); "" is the backend's default.
	UserNS  UserNS
	Network Network
	FS      FS
	// Write are host paths the peer may write (besides its cwd), Hide
	// host paths it finds empty; both absolute and clean.
	Write, Hide []string
	// Protect are host paths inside a writable path (the cwd, Write)
	// that stay read-only: files that run as code later outside the
	// session (internal/session/agentfs). Absolute and clean.
	Protect []string
	// Resources are the session's cgroup limits (resources.go).
	Resources Resources
	// Sockets are host unix sockets (absolute, clean, --socket) the peer
	// may connect to: each is shown at its path, whatever the confined
	// fs hides around it.
	Sockets []string
	// Allow, when set, are the destinations (--allow-host values, parsed
	// by internal/session/egress) the peer may reach through the
	// session's egress proxy; Network is then loopback.
	Allow []string
}

// Default reports whether p asks for nothing beyond the defaults.
func (p Policy) Default() bool {
	return p.User == nil && p.UserNS != UserNSPrivate && p.Net() == NetworkHost && p.FS == "" && len(p.Write) == 0 && len(p.Hide) == 0 && len(p.Allow) == 0 && len(p.Sockets) == 0
}

// ParsePaths checks --write/--hide values. Relative paths are taken
// from cwd; symlinks are resolved (a mount lands on the target anyway,
// and the peer must see the policy it was given). A --write path must
// exist; a --hide path that does not exist on the host is kept as given
// (the oci backend hides it inside its rootfs).
func ParsePaths(flag string, paths []string, cwd string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		r, err := filepath.EvalSymlinks(p)
		if err != nil && flag == "hide" && errors.Is(err, os.ErrNotExist) {
			r, err = filepath.Clean(p), nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: --%s %s: %v", ErrPolicy, flag, p, errors.Unwrap(err))
		}
		if r == "/" {
			return nil, fmt.Errorf("%w: --%s /: name the paths, or use --fs host", ErrPolicy, flag)
		}
		out = append(out, r)
	}
	return out, nil
}

// Net returns the network mode, "" read as host.
func (p Policy) Net() Network {
	if p.Network == "" {
		return NetworkHost
	}
	return p.Network
}

// Refuse returns the ErrUnsupported error a backend gives for a policy
// part it cannot apply: one line naming what to do instead.
func Refuse(backend, what, fix string) error {
	return fmt.Errorf("%w: --isolation %s cannot give %s; %s", ErrUnsupported, backend, what, fix)
}
