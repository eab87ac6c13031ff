package oci

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/isolation/mounts"
	"github.com/loki-sh/loki/internal/session/seccomp"
)

// TestConfig decodes the rendered config strictly into the runtime-spec
// types and checks every promise of the package doc.
func TestConfig(t *testing.T) {
	s, err := Config(Options{Rootfs: "/r", Init: "/bin/loki-init", ControlDir: "/run/loki/s/control",
		InitArgs: []string{"-lease-duration", "5s"}, PidsLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got specs.Spec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("not a runtime-spec config: %v", err)
	}
	p := got.Process
	if want := []string{InitPath, "-lease-duration", "5s", "-seccomp", "-scope-abstract-unix", ControlPath}; !slices.Equal(p.Args, want) {
		t.Errorf("args %v, want %v", p.Args, want)
	}
	if !p.NoNewPrivileges || len(p.Env) != 0 {
		t.Errorf("noNewPrivileges %v env %v", p.NoNewPrivileges, p.Env)
	}
	c := p.Capabilities
	if c == nil || len(c.Bounding)+len(c.Effective)+len(c.Permitted)+len(c.Inheritable)+len(c.Ambient) != 0 {
		t.Errorf("capabilities not empty: %+v", c)
	}
	if !got.Root.Readonly {
		t.Error("root is writable")
	}
	ns := map[specs.LinuxNamespaceType]bool{}
	for _, n := range got.Linux.Namespaces {
		ns[n.Type] = true
	}
	for _, n := range []specs.LinuxNamespaceType{specs.PIDNamespace, specs.MountNamespace, specs.IPCNamespace, specs.UTSNamespace} {
		if !ns[n] {
			t.Errorf("namespace %s missing", n)
		}
	}
	if got.Linux.Resources == nil || *got.Linux.Resources.Pids.Limit != 100 {
		t.Error("pids limit missing")
	}
	found := false
	for _, m := range got.Mounts {
		if m.Destination == ControlPath {
			found = m.Source == "/run/loki/s/control" && contains(m.Options, "ro") && contains(m.Options, "bind")
		}
	}
	if !found {
		t.Error("control dir is not bind-mounted read-only")
	}
}

// TestControlRootMasked: wherever the rootfs or a bind shows the host's
// control root (every session's lease), an empty read-only tmpfs covers it.
func TestControlRootMasked(t *testing.T) {
	root := "/nonexistent-loki/run" // not under the container's own /tmp
	control := filepath.Join(root, "session-1", "control")
	tests := []struct {
		name   string
		rootfs string
		binds  []mounts.Bind
		want   []string // mask destinations
		fails  bool
	}{
		{"separate rootfs", "/nonexistent-rootfs", nil, nil, false},
		{"host root", "/", nil, []string{root}, false},
		{"rootfs is the parent", filepath.Dir(root), nil, []string{"/" + filepath.Base(root)}, false},
		{"bind of the parent", "/r", []mounts.Bind{{Source: filepath.Dir(root), Destination: "/h"}}, []string{"/h/" + filepath.Base(root)}, false},
		{"bind of the root itself", "/r", []mounts.Bind{{Source: root, Destination: "/h"}}, []string{"/h"}, false},
		{"bind inside the root", "/r", []mounts.Bind{{Source: filepath.Join(root, "session-2"), Destination: "/h"}}, nil, true},
		{"unrelated bind", "/r", []mounts.Bind{{Source: "/usr", Destination: "/usr"}}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Config(Options{Rootfs: tc.rootfs, Init: "/bin/loki-init", ControlDir: control, ControlRoot: root, Binds: tc.binds})
			if tc.fails {
				if !errors.Is(err, ErrOptions) {
					t.Fatalf("err %v, want ErrOptions", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range s.Mounts {
				if m.Type == "tmpfs" && contains(m.Options, "ro") {
					got = append(got, m.Destination)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("masks %v, want %v", got, tc.want)
			}
			if len(got) > 0 && s.Mounts[len(s.Mounts)-1].Destination != got[len(got)-1] {
				t.Error("a mask is not the last mount: a later bind could uncover it")
			}
		})
	}
}

// A control root under /tmp is already hidden by the container's own /tmp.
func TestControlRootUnderTmpNeedsNoMask(t *testing.T) {
	s, err := Config(Options{Rootfs: "/", Init: "/bin/loki-init", ControlDir: "/tmp/loki-1000/session-1/control", ControlRoot: "/tmp/loki-1000"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range s.Mounts {
		if m.Type == "tmpfs" && contains(m.Options, "ro") {
			t.Errorf("unneeded mask at %s", m.Destination)
		}
	}
}

// Without a control root (a bundle made by hand) the control dir itself is
// what no view may show.
func TestControlDirMaskedWithoutRoot(t *testing.T) {
	s, err := Config(Options{Rootfs: "/", Init: "/bin/loki-init", ControlDir: "/nonexistent-loki/ctl"})
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Mounts[len(s.Mounts)-1]; m.Destination != "/nonexistent-loki/ctl" || m.Type != "tmpfs" {
		t.Errorf("last mount %+v, want a tmpfs over the control dir", m)
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// TestConfigConfinement: --user and --network reach the config.
func TestConfigConfinement(t *testing.T) {
	for _, tc := range []struct {
		policy  confine.Policy
		uid     uint32
		private bool
	}{
		{confine.Policy{}, 7, false},
		{confine.Policy{Network: confine.NetworkHost}, 7, false},
		{confine.Policy{Network: confine.NetworkLoopback, User: &confine.User{UID: 65534, GID: 65533}}, 65534, true},
		{confine.Policy{Network: confine.NetworkNone}, 7, true},
	} {
		s, err := Config(Options{Rootfs: "/r", Init: "/i", ControlDir: "/run/loki/s/control", UID: 7, GID: 7, Confine: tc.policy})
		if err != nil {
			t.Fatal(err)
		}
		if s.Process.User.UID != tc.uid || (tc.policy.User != nil && s.Process.User.GID != tc.policy.User.GID) {
			t.Errorf("%+v: user %+v", tc.policy, s.Process.User)
		}
		net := false
		for _, ns := range s.Linux.Namespaces {
			net = net || ns.Type == specs.NetworkNamespace
		}
		if net != tc.private {
			t.Errorf("%+v: network namespace %v, want %v", tc.policy, net, tc.private)
		}
		if !slices.Equal(s.Linux.ReadonlyPaths, confine.ReadonlyPaths) || !slices.Equal(s.Linux.MaskedPaths, confine.MaskedPaths) {
			t.Errorf("masked %v readonly %v", s.Linux.MaskedPaths, s.Linux.ReadonlyPaths)
		}
		if sc := s.Linux.Seccomp; sc == nil || sc.DefaultAction != specs.ActAllow || len(sc.Syscalls) != len(seccomp.Policy()) {
			t.Errorf("%+v: seccomp %+v, want the session's policy", tc.policy, sc)
		}
		scoped := slices.Contains(s.Process.Args, "-scope-abstract-unix")
		if !slices.Contains(s.Process.Args, "-seccomp") || scoped == tc.private {
			t.Errorf("%+v: init args %v: want -seccomp, and the abstract socket scope with the host's network only", tc.policy, s.Process.Args)
		}
	}
}

func TestConfigResources(t *testing.T) {
	s, err := Config(Options{Rootfs: "/r", Init: "/i", ControlDir: "/run/loki/s/control", PidsLimit: 64,
		Confine: confine.Policy{Resources: confine.Resources{PidsMax: 64, MemoryMax: 32 << 20, CPU: &confine.CPUMax{Quota: 50000, Period: 100000}}}})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Linux.Resources
	if r == nil || r.Pids == nil || *r.Pids.Limit != 64 || r.Memory == nil || *r.Memory.Limit != 32<<20 || *r.Memory.Swap != 32<<20 ||
		r.CPU == nil || *r.CPU.Quota != 50000 || *r.CPU.Period != 100000 {
		t.Fatalf("linux.resources = %+v", r)
	}
	s, err = Config(Options{Rootfs: "/r", Init: "/i", ControlDir: "/run/loki/s/control"})
	if err != nil || s.Linux.Resources != nil {
		t.Fatalf("no limits: resources %+v, %v", s.Linux.Resources, err)
	}
}

// TestConfigCgroupsPath: the runtime's cgroup goes where the session's
// cgroup nests it (v2), and where the runtime likes otherwise.
func TestConfigCgroupsPath(t *testing.T) {
	o := Options{Rootfs: "/r", Init: "/bin/loki-init", ControlDir: "/run/loki/s/control"}
	if s, err := Config(o); err != nil || s.Linux.CgroupsPath != "" {
		t.Fatalf("default: %q, %v", s.Linux.CgroupsPath, err)
	}
	o.CgroupsPath = "/user.slice/loki-session-1/loki-0123456789abcdef"
	if s, err := Config(o); err != nil || s.Linux.CgroupsPath != o.CgroupsPath {
		t.Fatalf("nested: %q, %v", s.Linux.CgroupsPath, err)
	}
}
