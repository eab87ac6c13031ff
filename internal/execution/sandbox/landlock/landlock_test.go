package landlock

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/execution/sandbox/boundary"
	"github.com/loki-sh/loki/internal/execution/sandbox/boundary/boundarytest"
	"github.com/loki-sh/loki/internal/execution/sandbox/seatbelt"
	kernlandlock "github.com/loki-sh/loki/internal/landlock"
)

// layout is the shared valid boundary (boundarytest) with a runtime file
// outside the runtime directory, port 443 reserved too, and a runner log.
type layout struct {
	*boundarytest.Layout
	rtFile, log string
}

func newLayout(t *testing.T) *layout {
	t.Helper()
	l := &layout{Layout: boundarytest.New(t, "")}
	l.rtFile = filepath.Join(l.Root, "tool")
	l.log = filepath.Join(l.Data, "runner.log")
	boundarytest.WriteFile(t, l.rtFile, "x", 0o700)
	l.Env[boundary.EnvRuntimeReadPaths] = l.RT + ":" + l.rtFile
	l.Env[boundary.EnvReservedPorts] = "8080,443"
	return l
}

func (l *layout) workspaceFor(t *testing.T, build bool) *boundary.Workspace {
	t.Helper()
	var w *boundary.Workspace
	var err error
	if build {
		w, err = boundary.ForWorkspace(l.Lookup, l.Workspace, l.RunSh, l.Spec)
	} else {
		w, err = boundary.ForRun(l.Lookup, l.Workspace)
	}
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func rulesByPath(rs *kernlandlock.Ruleset) map[string]uint64 {
	m := map[string]uint64{}
	for _, p := range rs.Paths {
		m[p.Path] = p.Access
	}
	return m
}

const (
	x  = kernlandlock.FSExecute
	rf = kernlandlock.FSReadFile
	rd = kernlandlock.FSReadDir
	wf = kernlandlock.FSWriteFile
	tr = kernlandlock.FSTruncate
)

// TestRulesPaths is the boundary→ruleset mapping, path by path, for a
// build and a run at ABI 7: what each path may do, and that nothing the
// boundary does not name (the secret, the layout's root, the home) has a
// rule.
func TestRulesPaths(t *testing.T) {
	l := newLayout(t)
	write := kernlandlock.HandledFS(7) &^ (kernlandlock.FSMakeChar | kernlandlock.FSMakeBlock | kernlandlock.FSIoctlDev)
	for _, build := range []bool{true, false} {
		rs, err := Rules(l.workspaceFor(t, build), l.log, 7)
		if err != nil {
			t.Fatal(err)
		}
		got := rulesByPath(rs)
		want := []struct {
			path   string
			access uint64
		}{
			{"/usr", x | rf | rd},
			{"/etc", x | rf | rd},
			{"/proc", rf | rd},
			{"/sys", rf | rd},
			{"/dev/null", rf | wf | tr},
			{"/dev/urandom", rf | wf | tr},
			{l.RT, x | rf | rd},
			{l.rtFile, x | rf}, // a file: no directory rights
			{l.Workspace, write},
			{l.Out, write},
			{l.log, wf | tr},
		}
		if build {
			want = append(want, struct {
				path   string
				access uint64
			}{l.Engine, x | rf | rd})
			// The spec lies in the workspace; its own rule is read and
			// execute on a file.
			if got[l.Spec] != x|rf {
				t.Errorf("spec %s: %v", l.Spec, kernlandlock.FSNames(got[l.Spec]))
			}
		}
		for _, w := range want {
			if got[w.path] != w.access {
				t.Errorf("build=%v: %s: %v, want %v", build, w.path, kernlandlock.FSNames(got[w.path]), kernlandlock.FSNames(w.access))
			}
		}
		for _, p := range []string{l.Secret, l.Root, l.Protected, "/", "/tmp", "/root", "/dev", "/run", "/home"} {
			if a, ok := got[p]; ok {
				t.Errorf("build=%v: %s has a rule (%v); the boundary does not name it", build, p, kernlandlock.FSNames(a))
			}
		}
		if _, ok := got[l.Engine]; ok != build {
			t.Errorf("build=%v: engine rule present %v", build, ok)
		}
		for p, a := range got {
			if a&(kernlandlock.FSMakeChar|kernlandlock.FSMakeBlock) != 0 {
				t.Errorf("%s may make device nodes", p)
			}
			if a&^(x|rf|rd) != 0 && !slices.Contains([]string{l.Workspace, l.Out, l.log}, p) && !slices.Contains(devices, p) {
				t.Errorf("%s may be written (%v) but is no write path", p, kernlandlock.FSNames(a))
			}
		}
		if !slices.IsSortedFunc(rs.Paths, func(a, b kernlandlock.PathRule) int { return strings.Compare(a.Path, b.Path) }) {
			t.Errorf("path rules not sorted")
		}
	}
}

// TestRulesRunDir: a run's own loki dir (in its record, outside the
// workspace) is writable as the workspace is, and its record beside it
// gets no rule.
func TestRulesRunDir(t *testing.T) {
	l := newLayout(t)
	own := filepath.Join(l.Data, "loki")
	if err := os.Mkdir(own, 0o700); err != nil {
		t.Fatal(err)
	}
	rs, err := Rules(l.workspaceFor(t, false), l.log, 7, own)
	if err != nil {
		t.Fatal(err)
	}
	got := rulesByPath(rs)
	if got[own] != got[l.Workspace] || got[own]&wf == 0 {
		t.Errorf("%s: %v, want the workspace's %v", own, kernlandlock.FSNames(got[own]), kernlandlock.FSNames(got[l.Workspace]))
	}
	if a, ok := got[l.Data]; ok {
		t.Errorf("the record dir has a rule: %v", kernlandlock.FSNames(a))
	}
}

// TestRulesABI: the ABI decides what is handled; below MinABI the
// boundary cannot be expressed and the rules are refused with the fix.
func TestRulesABI(t *testing.T) {
	l := newLayout(t)
	w := l.workspaceFor(t, true)
	for _, tc := range []struct {
		abi, used int
		err       string
	}{
		{abi: 0, err: "this kernel has none: boot with lsm=...,landlock"},
		{abi: 1, err: "this kernel has ABI 1"},
		{abi: 4, err: "this kernel has ABI 4"},
		{abi: 5, err: "needs Landlock ABI 6"},
		{abi: 6, used: 6},
		{abi: 7, used: 7},
		{abi: 9, used: kernlandlock.KnownABI},
	} {
		rs, err := Rules(w, l.log, tc.abi)
		if tc.err != "" {
			if !errors.Is(err, ErrABI) || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), EnvLandlock) || strings.Contains(err.Error(), "\n") {
				t.Errorf("ABI %d: %v, want one ErrABI line saying %q and naming %s", tc.abi, err, tc.err, EnvLandlock)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ABI %d: %v", tc.abi, err)
		}
		if rs.ABI != tc.used || rs.HandledFS != kernlandlock.HandledFS(tc.used) ||
			rs.HandledNet != kernlandlock.NetBindTCP|kernlandlock.NetConnectTCP ||
			rs.Scoped != kernlandlock.ScopeAbstractUnixSocket|kernlandlock.ScopeSignal {
			t.Errorf("ABI %d: ruleset at ABI %d handles fs %v net %x scoped %x", tc.abi, rs.ABI, kernlandlock.FSNames(rs.HandledFS), rs.HandledNet, rs.Scoped)
		}
		if tc.used == 6 && rs.HandledFS&kernlandlock.FSIoctlDev == 0 {
			t.Errorf("ABI 6 handles ioctl_dev (ABI 5)")
		}
	}
}

// TestRulesPorts: every TCP port but the reserved ones may be bound and
// connected to; port 0 (an ephemeral bind) only bound.
func TestRulesPorts(t *testing.T) {
	l := newLayout(t)
	rs, err := Rules(l.workspaceFor(t, true), "", 7)
	if err != nil {
		t.Fatal(err)
	}
	ports := map[uint16]uint64{}
	for _, p := range rs.Ports {
		if _, dup := ports[p.Port]; dup {
			t.Fatalf("port %d twice", p.Port)
		}
		ports[p.Port] = p.Access
	}
	both := kernlandlock.NetBindTCP | kernlandlock.NetConnectTCP
	for port, want := range map[uint16]uint64{0: kernlandlock.NetBindTCP, 1: both, 80: both, 442: both, 444: both, 8079: both, 8081: both, 65535: both} {
		if ports[port] != want {
			t.Errorf("port %d: %x, want %x", port, ports[port], want)
		}
	}
	for _, reserved := range []uint16{8080, 443} {
		if _, ok := ports[reserved]; ok {
			t.Errorf("reserved port %d has a rule", reserved)
		}
	}
	if len(ports) != 65536-2 {
		t.Errorf("%d port rules, want %d", len(ports), 65536-2)
	}
	if s := string(rs.JSON()); !strings.Contains(s, `"ports": "444-8079"`) || !strings.Contains(s, `"ports": "8081-65535"`) {
		t.Errorf("JSON does not show the ranges around the reserved ports:\n%s", s)
	}
}

// TestDevicesAsSeatbelt: the same devices as the Seatbelt profile.
func TestDevicesAsSeatbelt(t *testing.T) {
	if !slices.Equal(devices, seatbelt.Devices()) {
		t.Fatalf("devices %v, Seatbelt grants %v", devices, seatbelt.Devices())
	}
}

// TestConfineSwitch: off means no ruleset and no error; on, it refuses
// off Linux and on a kernel without a usable ABI, and writes nothing then.
func TestConfineSwitch(t *testing.T) {
	l := newLayout(t)
	dir := t.TempDir()
	h := host{goos: "linux", abi: func() int { return 7 }, lookup: l.Lookup}
	if f, c, err := h.confine(dir, l.Workspace, l.RunSh, l.Spec, "", ""); f != nil || c != nil || err != nil {
		t.Fatalf("switch off: %v %v %v", f, c, err)
	}
	l.Env[EnvLandlock] = " Yes "
	h.goos = "darwin"
	if _, _, err := h.confine(dir, l.Workspace, l.RunSh, l.Spec, "", ""); !errors.Is(err, ErrNotLinux) {
		t.Fatalf("on darwin: %v", err)
	}
	h.goos = "linux"
	h.abi = func() int { return 0 }
	if _, _, err := h.confine(dir, l.Workspace, l.RunSh, l.Spec, "", ""); !errors.Is(err, ErrABI) {
		t.Fatalf("ABI 0: %v", err)
	}
	l.Env[boundary.EnvReservedPorts] = "x"
	if _, _, err := h.confine(dir, l.Workspace, l.RunSh, l.Spec, "", ""); !errors.Is(err, boundary.ErrInvalid) {
		t.Fatalf("bad boundary: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, RulesetName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused confinement left %s: %v", RulesetName, err)
	}
}
