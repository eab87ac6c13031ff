package seatbelt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/execution/sandbox/boundary"
)

const validDigest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestEnabled(t *testing.T) {
	for _, tc := range []struct {
		value string
		set   bool
		want  bool
	}{
		{"1", true, true}, {"true", true, true}, {" YES\n", true, true}, {"On", true, true},
		{"", false, false}, {"", true, false}, {"0", true, false}, {"off", true, false},
		{"enabled", true, false}, {"y", true, false}, {"1 1", true, false},
	} {
		lookup := func(string) (string, bool) { return tc.value, tc.set }
		if got := Enabled(lookup, EnvSeatbelt); got != tc.want {
			t.Errorf("Enabled(%q, set=%v) = %v, want %v", tc.value, tc.set, got, tc.want)
		}
	}
}

// TestWrapOffLeavesArgs: with the switch off nothing is validated, written
// or wrapped, even when the rest of the configuration is missing.
func TestWrapOffLeavesArgs(t *testing.T) {
	for _, value := range []string{"", "0", "no", "off"} {
		t.Setenv(EnvSeatbelt, value)
		dir := t.TempDir()
		args := []string{"/x/run.sh", "--provider", "claude", "/x/spec.md"}
		got, conf, err := Wrap(dir, args, "/nonexistent", "/nonexistent", "/nonexistent")
		if err != nil || conf != nil || !slices.Equal(got, args) {
			t.Fatalf("%q: Wrap = %v, %v, %v; want args unchanged", value, got, conf, err)
		}
		if _, err := os.Stat(filepath.Join(dir, ProfileName)); !os.IsNotExist(err) {
			t.Fatalf("%q: profile written although Seatbelt is off", value)
		}
	}
}

// TestWrapRefusesOffMacOS runs the real entry point on this machine.
func TestWrapRefusesOffMacOS(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("this machine is macOS")
	}
	t.Setenv(EnvSeatbelt, "1")
	t.Setenv(EnvProbeSHA256, validDigest)
	_, conf, err := Wrap(t.TempDir(), []string{"/bin/true"}, "/tmp", "/tmp/run.sh", "/tmp/spec")
	if !errors.Is(err, ErrNotMacOS) || conf != nil {
		t.Fatalf("Wrap on %s = %v, %v; want ErrNotMacOS", runtime.GOOS, conf, err)
	}
	if err.Error() != "LOKI host Seatbelt is available only on macOS" {
		t.Fatalf("message %q is not the reference's", err)
	}
}

func TestWrapRefusals(t *testing.T) {
	b := newBoundary(t, "8080")
	bin := t.TempDir()
	fake := script(t, bin, "sandbox-exec", "exit 0\n")
	notExec := filepath.Join(bin, "not-exec")
	if err := os.WriteFile(notExec, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		goos    string
		sandbox string
		digest  string
		env     map[string]string
		want    error
	}{
		{"linux", "linux", fake, validDigest, nil, ErrNotMacOS},
		{"no sandbox-exec", "darwin", filepath.Join(bin, "missing"), validDigest, nil, ErrNoSandboxExec},
		{"sandbox-exec is a directory", "darwin", bin, validDigest, nil, ErrNoSandboxExec},
		{"sandbox-exec not executable", "darwin", notExec, validDigest, nil, ErrNoSandboxExec},
		{"digest missing", "darwin", fake, "", nil, ErrProbeDigest},
		{"digest short", "darwin", fake, validDigest[:63], nil, ErrProbeDigest},
		{"digest long", "darwin", fake, validDigest + "0", nil, ErrProbeDigest},
		{"digest upper case", "darwin", fake, strings.ToUpper(validDigest), nil, ErrProbeDigest},
		{"digest not hex", "darwin", fake, "g" + validDigest[1:], nil, ErrProbeDigest},
		{"digest with inner space", "darwin", fake, validDigest[:32] + " " + validDigest[33:], nil, ErrProbeDigest},
		{"boundary invalid", "darwin", fake, validDigest, map[string]string{boundary.EnvReservedPorts: "0"}, boundary.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{EnvSeatbelt: "yes", EnvProbeSHA256: tc.digest}
			for k, v := range b.Env {
				env[k] = v
			}
			for k, v := range tc.env {
				env[k] = v
			}
			h := host{goos: tc.goos, sandboxExec: tc.sandbox, lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
			dir := t.TempDir()
			got, conf, err := h.wrap(dir, []string{b.RunSh}, b.Workspace, b.RunSh, b.Spec)
			if !errors.Is(err, tc.want) || got != nil || conf != nil {
				t.Fatalf("wrap = %v, %v, %v; want %v", got, conf, err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, ProfileName)); !os.IsNotExist(err) {
				t.Fatal("a refused wrap wrote a profile")
			}
		})
	}
}

// TestWrapWritesProfile checks the armed path end to end on Linux with a
// stand-in sandbox-exec: the command, the profile file and the record.
func TestWrapWritesProfile(t *testing.T) {
	b := newBoundary(t, "8080,9090")
	fake := script(t, t.TempDir(), "sandbox-exec", "exit 0\n")
	env := map[string]string{EnvSeatbelt: "1", EnvProbeSHA256: " " + validDigest + "\n"}
	for k, v := range b.Env {
		env[k] = v
	}
	h := host{goos: "darwin", sandboxExec: fake, lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	execDir := filepath.Join(t.TempDir(), "exec")
	args := []string{b.RunSh, "--provider", "claude", b.Spec}
	got, conf, err := h.wrap(execDir, args, b.Workspace, b.RunSh, b.Spec)
	if err != nil {
		t.Fatal(err)
	}
	profilePath := filepath.Join(execDir, ProfileName)
	if want := append([]string{fake, "-f", profilePath}, args...); !slices.Equal(got, want) {
		t.Fatalf("wrapped = %q, want %q", got, want)
	}
	data, err := os.ReadFile(profilePath)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(profilePath); fi.Mode().Perm() != 0o600 {
		t.Errorf("profile mode %v, want 0600", fi.Mode().Perm())
	}
	w, err := boundary.ForWorkspace(h.lookup, b.Workspace, b.RunSh, b.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, Profile(w)) {
		t.Error("written profile differs from Profile")
	}
	sum := sha256.Sum256(data)
	want := Confinement{Kind: "macos-seatbelt", ProfileSHA256: hex.EncodeToString(sum[:]),
		KernelProbeSHA256: validDigest, KnownLimitations: KnownLimitations}
	if conf == nil || conf.Kind != want.Kind || conf.ProfileSHA256 != want.ProfileSHA256 ||
		conf.KernelProbeSHA256 != want.KernelProbeSHA256 || !slices.Equal(conf.KnownLimitations, want.KnownLimitations) {
		t.Fatalf("confinement = %+v, want %+v", conf, want)
	}
	if !bytes.Contains(data, []byte(`(deny network-bind (local tcp "*:9090"))`)) {
		t.Error("profile lacks the reserved-port denial")
	}
}
