package landlock

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"

	"github.com/loki-sh/loki/internal/execution/sandbox/boundary"
	kernlandlock "github.com/loki-sh/loki/internal/landlock"
	"github.com/loki-sh/loki/internal/safefile"
)

// The switch, the record's kind and the reviewable copy of the ruleset.
const (
	EnvLandlock = "LOKI_HOST_LANDLOCK"
	Kind        = "linux-landlock"
	RulesetName = "host-landlock.json" // in the execution directory
	// MinABI is the oldest ABI that expresses the whole boundary: TCP
	// port rules (4) and the abstract unix socket and signal scopes (6).
	MinABI = 6
)

// The refusals; their texts end up in an execution's launch_error.
var (
	ErrNotLinux = errors.New("LOKI host Landlock is available only on Linux (on macOS use LOKI_HOST_SEATBELT)")
	ErrABI      = errors.New("LOKI host Landlock needs Landlock ABI " + strconv.Itoa(MinABI) + " (Linux 6.12+)")
)

// KnownLimitations are recorded with every confinement: what the ruleset
// does not stop, stated so that nobody reads more into it.
var KnownLimitations = []string{
	"preexisting-cross-boundary-hardlinks",
	"unrestricted-outbound-network",
	"pathname-unix-sockets-reachable",
	"proc-and-sys-readable",
	// Landlock does not cover chmod, utimensat or user xattrs: a runner
	// may change those of a file its own uid owns outside the granted
	// trees (a root runner: root's files). No capabilities, so no chown
	// of another's file and no security.* xattr.
	"metadata-of-files-the-runner-uid-owns",
}

// Confinement is the state.json record of a confined run.
type Confinement struct {
	Kind             string   `json:"kind"`
	LandlockABI      int      `json:"landlock_abi"`
	RulesetSHA256    string   `json:"ruleset_sha256"`
	KnownLimitations []string `json:"known_limitations"`
}

// Linux's own read paths, beside the boundary's system paths (which name
// macOS's): configuration and the dynamic loader's libraries, readable and
// executable where they exist.
var linuxReadPaths = []string{"/etc", "/lib", "/lib32", "/lib64", "/libx32"}

// kernelReadPaths are readable, never executable: what Seatbelt's
// sysctl-read and process-info give a macOS build.
var kernelReadPaths = []string{"/proc", "/sys"}

// devices are read-write, as in the Seatbelt profile (truncate too: a
// shell's "> /dev/null" opens with O_TRUNC).
var devices = []string{"/dev/null", "/dev/random", "/dev/urandom", "/dev/zero"}

// resolvConf may link outside /etc (systemd-resolved); its target is
// readable, as the DNS resolver's socket is in the Seatbelt profile.
const resolvConf = "/etc/resolv.conf"

// Rights. A write path gets everything but making device nodes (a node in
// the workspace would reach a disk beneath every rule) and device ioctls.
const (
	readExec   = kernlandlock.FSExecute | kernlandlock.FSReadFile | kernlandlock.FSReadDir
	readOnly   = kernlandlock.FSReadFile | kernlandlock.FSReadDir
	readWrite  = kernlandlock.FSReadFile | kernlandlock.FSWriteFile | kernlandlock.FSTruncate
	logAppend  = kernlandlock.FSWriteFile | kernlandlock.FSTruncate
	notInWrite = kernlandlock.FSMakeChar | kernlandlock.FSMakeBlock | kernlandlock.FSIoctlDev
)

// Rules is the ruleset that confines a runner to w at the given kernel
// ABI (one newer than kernlandlock.KnownABI is used as that). runnerLog, when
// not empty, is the runner's own log, writable so that /dev/stdout and
// /dev/stderr reopen; own are dirs of the runner's own outside the
// workspace (a run's loki dir in its record), writable as the workspace.
// An ABI below MinABI is an ErrABI error.
func Rules(w *boundary.Workspace, runnerLog string, abi int, own ...string) (*kernlandlock.Ruleset, error) {
	if abi < MinABI {
		have := "none"
		if abi > 0 {
			have = "ABI " + strconv.Itoa(abi)
		}
		return nil, fmt.Errorf("%w; this kernel has %s: boot with lsm=...,landlock on a newer kernel, or unset %s", ErrABI, have, EnvLandlock)
	}
	abi = min(abi, kernlandlock.KnownABI)
	handled := kernlandlock.HandledFS(abi)
	rs := &kernlandlock.Ruleset{ABI: abi, HandledFS: handled, HandledNet: kernlandlock.HandledNet(abi), Scoped: kernlandlock.Scopes(abi)}

	grants := map[string]uint64{}
	grant := func(p string, access uint64) {
		fi, err := os.Stat(p)
		if err != nil {
			return // absent here: nothing to grant (a later rename is refused by Create)
		}
		access &= handled
		if !fi.IsDir() {
			access &= kernlandlock.FileAccess
		}
		if access != 0 {
			grants[p] |= access
		}
	}
	read := append(w.SystemReadPaths(), existing(linuxReadPaths)...)
	read = append(read, w.RuntimeReadPaths()...)
	read = append(read, w.EngineSource(), w.Spec())
	for _, p := range read {
		if p != "" {
			grant(p, readExec)
		}
	}
	if target, err := filepath.EvalSymlinks(resolvConf); err == nil && target != resolvConf {
		grant(target, kernlandlock.FSReadFile)
	}
	for _, p := range kernelReadPaths {
		grant(p, readOnly)
	}
	for _, d := range devices {
		grant(d, readWrite)
	}
	for _, p := range append(append(w.RuntimeWritePaths(), w.Dir()), own...) {
		grant(p, handled&^notInWrite)
	}
	if runnerLog != "" {
		// A file the supervisor opens before the ruleset is made; named
		// whether or not it exists yet, so that a printed ruleset is the
		// one applied.
		grants[runnerLog] |= logAppend & handled
	}
	paths := make([]string, 0, len(grants))
	for p := range grants {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		rs.Paths = append(rs.Paths, kernlandlock.PathRule{Path: p, Access: grants[p]})
	}

	reserved := w.ReservedPorts()
	rs.Ports = make([]kernlandlock.PortRule, 0, 65536-len(reserved))
	// Port 0 is the ephemeral bind; connecting to it means nothing.
	rs.Ports = append(rs.Ports, kernlandlock.PortRule{Port: 0, Access: kernlandlock.NetBindTCP})
	for p := 1; p <= 65535; p++ {
		if !slices.Contains(reserved, p) {
			rs.Ports = append(rs.Ports, kernlandlock.PortRule{Port: uint16(p), Access: kernlandlock.NetBindTCP | kernlandlock.NetConnectTCP})
		}
	}
	return rs, rs.Check()
}

func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// Armed reports whether LOKI_HOST_LANDLOCK is on in the environment.
func Armed() bool { return boundary.Enabled(boundary.Environ, EnvLandlock) }

// host is what Confine needs to know about the machine; tests substitute
// it, the real entry points use the running system.
type host struct {
	goos   string
	abi    func() int
	lookup boundary.Lookup
}

func realHost() host {
	return host{goos: runtime.GOOS, abi: kernlandlock.ABI, lookup: boundary.Environ}
}

// workspace loads the boundary for a build (runSh set) or a run.
func workspace(lookup boundary.Lookup, ws, runSh, spec string) (*boundary.Workspace, error) {
	if runSh == "" && spec == "" {
		return boundary.ForRun(lookup, ws)
	}
	return boundary.ForWorkspace(lookup, ws, runSh, spec)
}

// Confine returns the ruleset (a Landlock ruleset descriptor the exec gate
// enforces before it execs the runner) and its record when
// LOKI_HOST_LANDLOCK is on, and nil, nil otherwise. runSh and spec are
// empty for a `run`, and runDir is a run's own loki dir ("" when none).
// The ruleset is also written (0600) to executionDir/host-landlock.json
// for review.
func Confine(executionDir, workspace, runSh, spec, runnerLog, runDir string) (*os.File, *Confinement, error) {
	return realHost().confine(executionDir, workspace, runSh, spec, runnerLog, runDir)
}

func (h host) confine(executionDir, ws, runSh, spec, runnerLog, runDir string) (*os.File, *Confinement, error) {
	if !boundary.Enabled(h.lookup, EnvLandlock) {
		return nil, nil, nil
	}
	if h.goos != "linux" {
		return nil, nil, ErrNotLinux
	}
	w, err := workspace(h.lookup, ws, runSh, spec)
	if err != nil {
		return nil, nil, err
	}
	abi := h.abi()
	var own []string
	if runDir != "" {
		own = append(own, runDir)
	}
	rs, err := Rules(w, runnerLog, abi, own...)
	if err != nil {
		return nil, nil, err
	}
	text := rs.JSON()
	if err := safefile.WriteAtomic(filepath.Join(executionDir, RulesetName), text, 0o600); err != nil {
		return nil, nil, fmt.Errorf("landlock: write ruleset: %w", err)
	}
	f, err := rs.Create()
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(text)
	return f, &Confinement{
		Kind: Kind, LandlockABI: rs.ABI, RulesetSHA256: hex.EncodeToString(sum[:]),
		KnownLimitations: slices.Clone(KnownLimitations),
	}, nil
}

// Render returns the ruleset a confined build (runSh and spec set) or run
// of workspace, logging to runnerLog, would apply here, as JSON, from the
// boundary in the environment, without writing or enforcing anything, and
// the ABI it was made for: the kernel's, or kernlandlock.KnownABI where the
// kernel could not confine at all (the build would then be refused).
func Render(ws, runSh, spec, runnerLog string) ([]byte, int, error) {
	w, err := workspace(boundary.Environ, ws, runSh, spec)
	if err != nil {
		return nil, 0, err
	}
	abi := kernlandlock.ABI()
	if abi < MinABI {
		abi = kernlandlock.KnownABI
	}
	rs, err := Rules(w, runnerLog, abi)
	if err != nil {
		return nil, 0, err
	}
	return rs.JSON(), rs.ABI, nil
}
