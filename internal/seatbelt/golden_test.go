package seatbelt

import (
	"bytes"
	"testing"

	"github.com/loki-sh/loki/internal/canonjson"
	"github.com/loki-sh/loki/internal/hostbound"
	"github.com/loki-sh/loki/internal/seatbelt/golden"
)

const testdata = "testdata"

func mapLookup(env map[string]string) hostbound.Lookup {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// TestProfileGolden proves the profile is byte-for-byte the reference's.
func TestProfileGolden(t *testing.T) {
	golden.RequireMachine(t, testdata, Devices())
	for _, c := range golden.Load(t, testdata) {
		t.Run(c.Name, func(t *testing.T) {
			root := c.Build(t)
			w, err := hostbound.ForWorkspace(mapLookup(c.Environ(root)), golden.Expand(c.Workspace, root),
				golden.Expand(c.RunSh, root), golden.Expand(c.Spec, root))
			if err != nil {
				t.Fatalf("%s: %v", c.About, err)
			}
			want := golden.Want(t, testdata, c.Name+".sb")
			if got := Profile(w); !bytes.Equal(got, want) {
				t.Errorf("%s: profile differs from the reference\n--- got\n%s\n--- want\n%s", c.About, got, want)
			}
		})
	}
}

// TestIdentityGolden proves config_sha256 and the joined fields are the
// reference's bytes, including escaped non-UTF-8 and non-ASCII paths.
func TestIdentityGolden(t *testing.T) {
	for _, c := range golden.Load(t, testdata) {
		t.Run(c.Name, func(t *testing.T) {
			root := c.Build(t)
			id, err := hostbound.IdentityOf(mapLookup(c.Environ(root)), golden.Expand(c.WorkspaceRoot, root), golden.Expand(c.RunSh, root))
			if err != nil {
				t.Fatal(err)
			}
			got, err := canonjson.MarshalIndent(id.Map())
			if err != nil {
				t.Fatal(err)
			}
			want := golden.Want(t, testdata, c.Name+".identity.json")
			if !bytes.Equal(append(got, '\n'), want) {
				t.Errorf("identity differs from the reference\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}
