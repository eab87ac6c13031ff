//go:build unix

package seatbelt

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"time"

	"github.com/loki-sh/loki/internal/execution/sandbox/boundary"
	"github.com/loki-sh/loki/internal/pycompat"
	"github.com/loki-sh/loki/internal/safefile"
)

// The switches, and the one program that applies a profile.
const (
	EnvSeatbelt    = "LOKI_HOST_SEATBELT"
	EnvProbeSHA256 = "LOKI_HOST_SEATBELT_PROBE_SHA256"
	SandboxExec    = "/usr/bin/sandbox-exec"
	ProfileName    = "host-seatbelt.sb" // in the execution directory
	Kind           = "macos-seatbelt"
)

// KnownLimitations are recorded with every confinement: what the profile
// does not stop, stated so that nobody reads more into it.
var KnownLimitations = []string{
	"preexisting-cross-boundary-hardlinks",
	"unrestricted-outbound-network",
	"provider-credential-store-visible-to-confined-build",
	"deprecated-macos-sandbox-exec",
}

// Confinement is the state.json record of a confined build.
type Confinement struct {
	Kind              string   `json:"kind"`
	ProfileSHA256     string   `json:"profile_sha256"`
	KernelProbeSHA256 string   `json:"kernel_probe_sha256"`
	KnownLimitations  []string `json:"known_limitations"`
}

// Compiled on first use: every run of the binary (the namespace stage
// too) would pay for it at start otherwise.
var probeDigest = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })

// Enabled reports whether a variable is switched on (boundary.Enabled).
func Enabled(lookup boundary.Lookup, name string) bool { return boundary.Enabled(lookup, name) }

// host is what Wrap and Probe need to know about the machine. Tests on
// Linux substitute a fake sandbox-exec and claim to be darwin; the real
// entry points use the running system.
type host struct {
	goos         string
	sandboxExec  string
	lookup       boundary.Lookup
	probeTimeout time.Duration
}

func realHost() host {
	return host{goos: runtime.GOOS, sandboxExec: SandboxExec, lookup: boundary.Environ, probeTimeout: ProbeTimeout}
}

// usable refuses off macOS and without an executable sandbox-exec.
func (h host) usable() error {
	if h.goos != "darwin" {
		return ErrNotMacOS
	}
	fi, err := os.Stat(h.sandboxExec)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return ErrNoSandboxExec
	}
	return nil
}

// Wrap returns the command that runs args confined to workspace, and the
// record of that confinement, when LOKI_HOST_SEATBELT is on; otherwise it
// returns args unchanged and a nil record. The profile is written (0600)
// to executionDir/host-seatbelt.sb, which the wrapped command reads.
func Wrap(executionDir string, args []string, workspace, runSh, spec string) ([]string, *Confinement, error) {
	return realHost().wrap(executionDir, args, workspace, runSh, spec)
}

func (h host) wrap(executionDir string, args []string, workspace, runSh, spec string) ([]string, *Confinement, error) {
	if !Enabled(h.lookup, EnvSeatbelt) {
		return args, nil, nil
	}
	if err := h.usable(); err != nil {
		return nil, nil, err
	}
	raw, _ := h.lookup(EnvProbeSHA256)
	probe := pycompat.Strip(raw)
	if !probeDigest().MatchString(probe) {
		return nil, nil, ErrProbeDigest
	}
	w, err := boundary.ForWorkspace(h.lookup, workspace, runSh, spec)
	if err != nil {
		return nil, nil, err
	}
	profile := Profile(w)
	path := filepath.Join(executionDir, ProfileName)
	if err := safefile.WriteAtomic(path, profile, 0o600); err != nil {
		return nil, nil, fmt.Errorf("seatbelt: write profile: %w", err)
	}
	wrapped := append([]string{h.sandboxExec, "-f", path}, args...)
	return wrapped, &Confinement{
		Kind:              Kind,
		ProfileSHA256:     sha256Hex(profile),
		KernelProbeSHA256: probe,
		KnownLimitations:  append([]string(nil), KnownLimitations...),
	}, nil
}

// Render returns the profile a confined build of workspace would apply,
// from the host boundary in the environment, without writing anything. It
// is pure, so it works on any system: a user can inspect (and diff) the
// sandbox before arming LOKI_HOST_SEATBELT. Boundary errors wrap
// boundary.ErrInvalid.
func Render(workspace, runSh, spec string) ([]byte, error) {
	w, err := boundary.ForWorkspace(boundary.Environ, workspace, runSh, spec)
	if err != nil {
		return nil, err
	}
	return Profile(w), nil
}

// Armed reports whether LOKI_HOST_SEATBELT is switched on in the
// environment (Wrap then confines, or refuses).
func Armed() bool { return Enabled(boundary.Environ, EnvSeatbelt) }

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
