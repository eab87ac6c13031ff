package ocibundle

import (
	"bytes"
	"encoding/json"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
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
	if want := []string{InitPath, "-lease-duration", "5s", ControlPath}; !equal(p.Args, want) {
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

func TestParseBind(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		want Bind
	}{
		{"/a:/b", true, Bind{Source: "/a", Destination: "/b"}},
		{"/a:/b:ro", true, Bind{Source: "/a", Destination: "/b", ReadOnly: true}},
		{"a:/b", false, Bind{}},
		{"/a", false, Bind{}},
		{"/a:/b:xx", false, Bind{}},
	}
	for _, tc := range tests {
		got, err := ParseBind(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseBind(%q) = %+v, %v", tc.in, got, err)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
