package oci

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/isolation/mounts"
	"github.com/loki-sh/loki/internal/session/seccomp/ocispec"
)

// Fixed paths inside the container.
const (
	InitPath    = "/.loki/init"
	ControlPath = "/.loki/control"
)

// SpecVersion is the ociVersion written: the oldest one with every field
// used here, so that the runtimes Debian ships (crun 1.8, runc 1.1) accept it.
const SpecVersion = "1.0.2"

// DefaultPidsLimit bounds the number of tasks in the container.
const DefaultPidsLimit = confine.DefaultPidsMax

// ErrOptions reports an unusable Options value.
var ErrOptions = errors.New("invalid OCI bundle options")

// Options are the inputs of Config.
type Options struct {
	Rootfs     string // host path of the root filesystem
	Init       string // host path of the static loki-init
	ControlDir string // host path of the control dir
	// ControlRoot is the host dir holding every session's dir (other
	// sessions' leases): no view of it reaches the peer. "" protects
	// ControlDir alone (a bundle made by hand: oci-spec).
	ControlRoot string
	InitArgs    []string
	// PidsLimit > 0 sets linux.resources.pids.limit.
	PidsLimit int64
	// WritableRootfs leaves the root filesystem writable.
	WritableRootfs bool
	// UID and GID are the init's and the peer's, unless Confine.User
	// names others.
	UID, GID uint32
	// Confine is the session's confinement policy (user, network).
	Confine  confine.Policy
	Hostname string
	Binds    []mounts.Bind
	// CgroupsPath is linux.cgroupsPath ("" = the runtime's default): on
	// cgroup v2 the session's own cgroup nests the container's in it.
	CgroupsPath string
	// UserNS, when set, gives the container a user namespace of its own
	// mapping ids 0 and up to these host ids (UserNamespace decides).
	UserNS *confine.IDRange
	// HostSockets are the host's unix sockets found at the start
	// (sockdiag): those the rootfs or a read-only bind shows are masked.
	HostSockets []string
}

// WithPolicy translates a session's policy into the bundle's options:
// the policy itself (user, network, filesystem, limits), the pids limit
// to write, the private user namespace a root supervisor gives it, and
// the ids the init runs with otherwise (the supervisor's own).
func (o Options) WithPolicy(p confine.Policy) Options {
	o.Confine = p
	o.PidsLimit = p.Resources.Pids()
	o.UserNS = UserNamespace(p, os.Geteuid())
	o.UID, o.GID = uint32(os.Geteuid()), uint32(os.Getegid())
	return o
}

func (o Options) validate() error {
	for name, p := range map[string]string{"rootfs": o.Rootfs, "loki-init": o.Init, "control dir": o.ControlDir} {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("%w: %s path %q is not absolute", ErrOptions, name, p)
		}
	}
	if o.UserNS != nil {
		return o.validateUserNS()
	}
	return nil
}

// Config returns the runtime-spec configuration for one session.
func Config(o Options) (*specs.Spec, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	noCaps := &specs.LinuxCapabilities{
		Bounding: []string{}, Effective: []string{}, Inheritable: []string{},
		Permitted: []string{}, Ambient: []string{},
	}
	args := append([]string{InitPath}, o.InitArgs...)
	args = append(append(args, InitFlags(o.Confine)...), ControlPath)
	hostname := o.Hostname
	if hostname == "" {
		hostname = "loki"
	}
	ms, err := specMounts(o)
	if err != nil {
		return nil, err
	}
	user := specs.User{UID: o.UID, GID: o.GID}
	if u := o.Confine.User; u != nil {
		user = specs.User{UID: u.UID, GID: u.GID}
	}
	namespaces := []specs.LinuxNamespace{
		{Type: specs.PIDNamespace}, {Type: specs.MountNamespace},
		{Type: specs.IPCNamespace}, {Type: specs.UTSNamespace},
	}
	var uidMap, gidMap []specs.LinuxIDMapping
	if r := o.UserNS; r != nil {
		// The init and the peer are root of the namespace only.
		user = specs.User{UID: 0, GID: 0}
		namespaces = append(namespaces, specs.LinuxNamespace{Type: specs.UserNamespace})
		uidMap, gidMap = idMappings(*r)
	}
	if o.Confine.Net().Private() {
		// The runtimes bring lo up in a new network namespace: loopback.
		namespaces = append(namespaces, specs.LinuxNamespace{Type: specs.NetworkNamespace})
	}
	s := &specs.Spec{
		Version: SpecVersion,
		Process: &specs.Process{
			User:            user,
			Args:            args,
			Env:             []string{}, // the peer's env travels in the prelude only
			Cwd:             "/",
			Capabilities:    noCaps,
			NoNewPrivileges: true,
		},
		Root:     &specs.Root{Path: o.Rootfs, Readonly: !o.WritableRootfs},
		Hostname: hostname,
		Mounts:   ms,
		Linux: &specs.Linux{
			Namespaces:    namespaces,
			UIDMappings:   uidMap,
			GIDMappings:   gidMap,
			MaskedPaths:   append([]string(nil), confine.MaskedPaths...),
			ReadonlyPaths: append([]string(nil), confine.ReadonlyPaths...),
			Seccomp:       ocispec.Seccomp(),
		},
	}
	s.Linux.Resources = resources(o.PidsLimit, o.Confine.Resources)
	s.Linux.CgroupsPath = o.CgroupsPath
	return s, nil
}

// resources is linux.resources for the pids limit and --memory-max
// (swap limited with it: memory plus swap at the same value) and
// --cpu-max; nil when there is none.
func resources(pids int64, r confine.Resources) *specs.LinuxResources {
	var lr specs.LinuxResources
	if pids > 0 {
		lr.Pids = &specs.LinuxPids{Limit: &pids}
	}
	if m := r.MemoryMax; m > 0 {
		lr.Memory = &specs.LinuxMemory{Limit: &m, Swap: &m}
	}
	if c := r.CPU; c != nil {
		quota, period := c.Quota, c.Period
		lr.CPU = &specs.LinuxCPU{Quota: &quota, Period: &period}
	}
	if lr.Pids == nil && lr.Memory == nil && lr.CPU == nil {
		return nil
	}
	return &lr
}

func specMounts(o Options) ([]specs.Mount, error) {
	sys := specs.Mount{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}}
	if o.UserNS != nil && !o.Confine.Net().Private() {
		// A user namespace may mount sysfs only with a network
		// namespace of its own: show the host's, read-only throughout.
		sys = specs.Mount{Destination: "/sys", Type: "bind", Source: "/sys", Options: []string{"rbind", "nosuid", "noexec", "nodev", "ro", "rro"}}
	}
	tmpSize := "size=" + strconv.FormatInt(o.Confine.Resources.Tmp(), 10)
	ms := []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}},
		{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", tmpSize}},
		{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
		sys,
		{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777", tmpSize}},
		{Destination: InitPath, Type: "bind", Source: o.Init, Options: []string{"bind", "ro", "nosuid", "nodev"}},
		{Destination: ControlPath, Type: "bind", Source: o.ControlDir, Options: []string{"bind", "ro", "nosuid", "nodev", "noexec"}},
	}
	for _, w := range o.Confine.Write {
		// --write PATH: the host path, writable, at the same path.
		ms = append(ms, o.writableBind(w, w))
	}
	for _, b := range o.Binds {
		if !b.ReadOnly {
			ms = append(ms, o.writableBind(b.Source, b.Destination))
			continue
		}
		ms = append(ms, specs.Mount{Destination: b.Destination, Type: "bind", Source: b.Source, Options: []string{"rbind", "nosuid", "nodev", "ro"}})
	}
	for _, p := range o.Confine.Protect {
		// Inside a --write path, read-only again (agentfs); a dir
		// idmapped as that path is (crun cannot idmap a file mount: a
		// file shows through its "other" bits in a private user
		// namespace, so agentfs makes its placeholders 0644).
		m := specs.Mount{Destination: p, Type: "bind", Source: p, Options: []string{"rbind", "nosuid", "nodev", "ro"}}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			m = o.writableBind(p, p)
			m.Options = append(m.Options, "ro")
		}
		ms = append(ms, m)
	}
	for _, h := range o.Confine.Hide {
		// --hide PATH: an empty read-only tmpfs over the container's
		// PATH, /dev/null over a file.
		if st, err := os.Stat(filepath.Join(o.Rootfs, h)); err == nil && !st.IsDir() {
			ms = append(ms, specs.Mount{Destination: h, Type: "bind", Source: "/dev/null", Options: []string{"bind", "ro"}})
			continue
		}
		ms = append(ms, specs.Mount{Destination: h, Type: "tmpfs", Source: "tmpfs",
			Options: []string{"ro", "nosuid", "nodev", "noexec", "mode=0555", "size=4k"}})
	}
	// The host's socket dirs, private; its sockets found at the start,
	// masked; those --socket names, shown at their paths.
	hv := mounts.SocketViews(o.Rootfs, o.Binds, confine.PrivateHostDirs(), o.HostSockets, append(o.Confine.Sockets, o.Confine.Write...), hiddenByTmpfs)
	for _, d := range hv.Private {
		ms = append(ms, specs.Mount{Destination: d, Type: "tmpfs", Source: "tmpfs",
			Options: []string{"nosuid", "nodev", "mode=0755", "size=" + strconv.FormatInt(confine.RunSize, 10)}})
	}
	for _, m := range hv.Masked {
		ms = append(ms, specs.Mount{Destination: m, Type: "bind", Source: "/dev/null", Options: []string{"bind", "ro"}})
	}
	for _, s := range o.Confine.Sockets {
		ms = append(ms, specs.Mount{Destination: s, Type: "bind", Source: s, Options: []string{"bind", "nosuid", "nodev"}})
	}
	masks, err := controlRootMasks(o)
	if err != nil {
		return nil, err
	}
	return append(ms, masks...), nil
}

// hiddenByTmpfs are the container's own tmpfs mounts (see mounts): host
// content under them is not visible and needs no mask.
var hiddenByTmpfs = []string{"/tmp", "/dev"}

// controlRootMasks covers every place where the rootfs or a bind would show
// the host's control root with an empty read-only tmpfs. They come last so
// that no later mount uncovers them; the session's own control dir stays
// reachable at ControlPath.
func controlRootMasks(o Options) ([]specs.Mount, error) {
	root := o.ControlRoot
	if root == "" {
		root = o.ControlDir
	}
	views := append([]mounts.Bind{{Source: o.Rootfs, Destination: "/"}}, o.Binds...)
	dests, err := mounts.ControlRootViews(root, views, hiddenByTmpfs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	var masks []specs.Mount
	for _, d := range dests {
		masks = append(masks, specs.Mount{Destination: d, Type: "tmpfs", Source: "tmpfs",
			Options: []string{"ro", "nosuid", "nodev", "noexec", "mode=0700", "size=64k"}})
	}
	return masks, nil
}

// Marshal renders a config as runtimes read it.
func Marshal(s *specs.Spec) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "\t")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// InitFlags are loki-init's flags that confine the peer where a runtime
// started the init: the syscall policy on every thread, and with the
// host's network the abstract unix socket scope the namespace stage
// gives (a network namespace of its own isolates them by itself).
func InitFlags(p confine.Policy) []string {
	flags := []string{"-seccomp"}
	if !p.Net().Private() {
		flags = append(flags, "-scope-abstract-unix")
	}
	return flags
}
