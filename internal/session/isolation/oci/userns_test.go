package oci

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/isolation/mounts"
)

// TestUserNamespace: as root the default is a private user namespace;
// --user and --userns host keep the host's ids; without root nothing
// gets one (Capabilities refuses --userns private there).
func TestUserNamespace(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       confine.Policy
		euid    int
		private bool
	}{
		{"root default", confine.Policy{}, 0, true},
		{"root private", confine.Policy{UserNS: confine.UserNSPrivate}, 0, true},
		{"root host", confine.Policy{UserNS: confine.UserNSHost}, 0, false},
		{"root user", confine.Policy{User: &confine.User{UID: 65534, GID: 65534}}, 0, false},
		{"user default", confine.Policy{}, 1000, false},
		{"user private", confine.Policy{UserNS: confine.UserNSPrivate}, 1000, false},
	} {
		r := UserNamespace(tc.p, tc.euid)
		if (r != nil) != tc.private {
			t.Errorf("%s: range %+v, want private=%v", tc.name, r, tc.private)
		}
		if r != nil && (r.UID == 0 || r.GID == 0 || r.Size == 0) {
			t.Errorf("%s: range %+v maps host root", tc.name, r)
		}
	}
}

// reachable makes a rootfs and a loki-init that others can reach.
func reachable(t *testing.T) (rootfs, init string) {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rootfs, init = filepath.Join(dir, "rootfs"), filepath.Join(dir, "loki-init")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(init, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	return rootfs, init
}

// TestConfigUserNamespace: the namespace and its mappings, root of it as
// the process user, only writable binds idmapped (with recursive nosuid
// and nodev), /sys bound read-only from the host unless the container
// has a network namespace of its own (sysfs needs one).
func TestConfigUserNamespace(t *testing.T) {
	rootfs, init := reachable(t)
	r := confine.IDRange{UID: 100000, GID: 200000, Size: 65536}
	for _, net := range []confine.Network{confine.NetworkHost, confine.NetworkLoopback} {
		s, err := Config(Options{Rootfs: rootfs, Init: init, ControlDir: "/run/loki/s/control", UID: 0, GID: 0, UserNS: &r,
			Binds:   []mounts.Bind{{Source: "/srv/ro", Destination: "/ro", ReadOnly: true}, {Source: "/srv/rw", Destination: "/rw"}},
			Confine: confine.Policy{Write: []string{"/srv/w"}, Network: net}})
		if err != nil {
			t.Fatal(err)
		}
		userns := false
		for _, n := range s.Linux.Namespaces {
			userns = userns || n.Type == specs.UserNamespace
		}
		want := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 65536}}
		if !userns || len(s.Linux.UIDMappings) != 1 || s.Linux.UIDMappings[0] != want[0] ||
			len(s.Linux.GIDMappings) != 1 || s.Linux.GIDMappings[0].HostID != 200000 {
			t.Fatalf("user namespace %v, uid %+v, gid %+v", userns, s.Linux.UIDMappings, s.Linux.GIDMappings)
		}
		if s.Process.User.UID != 0 || s.Process.User.GID != 0 {
			t.Errorf("process user %+v: want the namespace's root", s.Process.User)
		}
		for _, m := range s.Mounts {
			idmapped := contains(m.Options, "idmap")
			switch m.Destination {
			case "/srv/w", "/rw":
				if !idmapped || !contains(m.Options, "rnosuid") || !contains(m.Options, "rnodev") || len(m.UIDMappings) != 1 || m.UIDMappings[0] != want[0] {
					t.Errorf("writable bind %s: %+v", m.Destination, m)
				}
			case "/sys":
				if net.Private() && m.Type != "sysfs" || !net.Private() && (m.Type != "bind" || !contains(m.Options, "rro")) {
					t.Errorf("network %s: /sys %+v", net, m)
				}
			default:
				if idmapped {
					t.Errorf("%s is idmapped: %+v", m.Destination, m)
				}
			}
		}
	}
}

// TestConfigUserNamespaceRefusals: a rootfs or loki-init the namespace's
// root cannot reach, and a writable rootfs it does not own.
func TestConfigUserNamespaceRefusals(t *testing.T) {
	rootfs, init := reachable(t)
	r := confine.IDRange{UID: 100000, GID: 100000, Size: 65536}
	hidden := filepath.Join(t.TempDir(), "rootfs")
	if err := os.Mkdir(hidden, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(hidden), 0o700); err != nil {
		t.Fatal(err)
	}
	private := filepath.Join(filepath.Dir(init), "private-init")
	if err := os.WriteFile(private, nil, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]Options{
		"hidden rootfs":   {Rootfs: hidden, Init: init},
		"private init":    {Rootfs: rootfs, Init: private},
		"writable rootfs": {Rootfs: rootfs, Init: init, WritableRootfs: true},
	} {
		o.ControlDir, o.UserNS = "/run/loki/s/control", &r
		if _, err := Config(o); !errors.Is(err, confine.ErrUnsupported) {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
	if err := os.Chown(rootfs, int(r.UID), int(r.GID)); err != nil {
		t.Skipf("chown: %v", err)
	}
	if _, err := Config(Options{Rootfs: rootfs, Init: init, ControlDir: "/c", UserNS: &r, WritableRootfs: true}); err != nil {
		t.Errorf("writable rootfs owned by the namespace's root: %v", err)
	}
}

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		out       string
		v         []int
		crun, old bool
	}{
		{"crun version 1.8.1\ncommit: f8a0\n", []int{1, 8, 1}, true, false},
		{"crun version 1.4.2\n", []int{1, 4, 2}, true, true},
		{"runc version 1.1.5+ds1\ncommit: x\n", []int{1, 1, 5}, false, true},
		{"runc version 1.2.0-rc.1\n", []int{1, 2, 0}, false, false},
		{"runc version 1.10\n", []int{1, 10}, false, false},
	} {
		v := parseVersion(tc.out)
		if !slices.Equal(v, tc.v) {
			t.Errorf("%q: %v, want %v", tc.out, v, tc.v)
		}
		want := []int{1, 2}
		if tc.crun {
			want = []int{1, 4, 3}
		}
		if atLeast(v, want) == tc.old {
			t.Errorf("%q: at least %v = %v", tc.out, want, !tc.old)
		}
	}
	if v := parseVersion("runc: unknown\n"); v != nil {
		t.Errorf("garbage: %v", v)
	}
}
