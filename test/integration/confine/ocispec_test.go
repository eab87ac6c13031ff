//go:build linux

package confine

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/loki-sh/loki/internal/testutil"
)

// TestOCISpecTakesThePolicy: oci-spec parses the same confinement flags
// as session and writes them into the config people run themselves; what
// a bundle cannot give (--fs host) is refused in one line, not dropped.
func TestOCISpecTakesThePolicy(t *testing.T) {
	sup, init := testutil.Binary(t, "loki-supervise"), testutil.Binary(t, "loki-init")
	root := t.TempDir()
	rootfs, ctl, wr := filepath.Join(root, "rootfs"), filepath.Join(root, "ctl", "s", "control"), filepath.Join(root, "w")
	for _, d := range []string{filepath.Join(rootfs, "etc", "secret"), ctl, wr} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	base := []string{"oci-spec", "--init", init, "--rootfs", rootfs, "--control-dir", ctl}
	cmd := exec.Command(sup, append(base, "--user", "65534:65533", "--network", "none", "--write", wr,
		"--hide", "/etc/secret", "--memory-max", "64M", "--cpu-max", "0.5", "--pids-max", "77")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oci-spec: %v: %s", err, stderr.String())
	}
	var s specs.Spec
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("not a runtime-spec config: %v", err)
	}
	if s.Process.User.UID != 65534 || s.Process.User.GID != 65533 {
		t.Errorf("user %+v", s.Process.User)
	}
	net := false
	for _, ns := range s.Linux.Namespaces {
		net = net || ns.Type == specs.NetworkNamespace
	}
	if !net {
		t.Error("--network none: no network namespace")
	}
	r := s.Linux.Resources
	if r == nil || r.Pids == nil || r.Pids.Limit == nil || *r.Pids.Limit != 77 ||
		r.Memory == nil || r.Memory.Limit == nil || *r.Memory.Limit != 64<<20 ||
		r.CPU == nil || r.CPU.Quota == nil || r.CPU.Period == nil || *r.CPU.Quota*2 != int64(*r.CPU.Period) {
		t.Errorf("resources %+v", r)
	}
	mounts := map[string]specs.Mount{}
	for _, m := range s.Mounts {
		mounts[m.Destination] = m
	}
	if m, ok := mounts[wr]; !ok || m.Source != wr || strings.Contains(strings.Join(m.Options, ","), "ro") {
		t.Errorf("--write %s: mount %+v", wr, m)
	}
	if m, ok := mounts["/etc/secret"]; !ok || m.Type != "tmpfs" || !strings.Contains(strings.Join(m.Options, ","), "ro") {
		t.Errorf("--hide /etc/secret: mount %+v", m)
	}
	if !s.Root.Readonly || !contains(s.Linux.ReadonlyPaths, "/proc/sys") || !contains(s.Linux.MaskedPaths, "/proc/kcore") {
		t.Errorf("root ro %v, readonly %v, masked %v", s.Root.Readonly, s.Linux.ReadonlyPaths, s.Linux.MaskedPaths)
	}

	cmd = exec.Command(sup, append(base, "--fs", "host")...)
	stderr.Reset()
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if exitOf(err) == 0 || len(out) != 0 || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 || !strings.Contains(stderr.String(), "--fs host") {
		t.Errorf("--fs host: exit %v, %d bytes of config, stderr %q: want a one-line refusal", err, len(out), stderr.String())
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func exitOf(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
