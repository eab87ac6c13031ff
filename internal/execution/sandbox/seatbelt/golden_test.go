package seatbelt

import (
	"bytes"
	"testing"

	"github.com/loki-sh/loki/internal/canonjson"
	"github.com/loki-sh/loki/internal/execution/sandbox/boundary"
	"github.com/loki-sh/loki/internal/execution/sandbox/seatbelt/seatbelttest"
)

const testdata = "testdata"

func mapLookup(env map[string]string) boundary.Lookup {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// TestProfileGolden proves the profile is byte-for-byte the reference's.
func TestProfileGolden(t *testing.T) {
	seatbelttest.RequireMachine(t, testdata, Devices())
	for _, c := range seatbelttest.Load(t, testdata) {
		t.Run(c.Name, func(t *testing.T) {
			root := c.Build(t)
			w, err := boundary.ForWorkspace(mapLookup(c.Environ(root)), seatbelttest.Expand(c.Workspace, root),
				seatbelttest.Expand(c.RunSh, root), seatbelttest.Expand(c.Spec, root))
			if err != nil {
				t.Fatalf("%s: %v", c.About, err)
			}
			want := seatbelttest.Want(t, testdata, c.Name+".sb")
			if got := Profile(w); !bytes.Equal(got, want) {
				t.Errorf("%s: profile differs from the reference\n--- got\n%s\n--- want\n%s", c.About, got, want)
			}
		})
	}
}

// TestIdentityGolden proves config_sha256 and the joined fields are the
// reference's bytes, including escaped non-UTF-8 and non-ASCII paths.
func TestIdentityGolden(t *testing.T) {
	for _, c := range seatbelttest.Load(t, testdata) {
		t.Run(c.Name, func(t *testing.T) {
			root := c.Build(t)
			id, err := boundary.IdentityOf(mapLookup(c.Environ(root)), seatbelttest.Expand(c.WorkspaceRoot, root), seatbelttest.Expand(c.RunSh, root))
			if err != nil {
				t.Fatal(err)
			}
			got, err := canonjson.MarshalIndent(id.Map())
			if err != nil {
				t.Fatal(err)
			}
			want := seatbelttest.Want(t, testdata, c.Name+".identity.json")
			if !bytes.Equal(append(got, '\n'), want) {
				t.Errorf("identity differs from the reference\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}
