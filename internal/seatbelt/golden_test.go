package seatbelt

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/canonjson"
	"github.com/loki-sh/loki/internal/hostbound"
	"github.com/loki-sh/loki/internal/testutil"
)

// goldenCase is one entry of testdata/cases.json: a directory tree to build
// under a fixed root and the environment and arguments to evaluate there.
// The reference produced testdata/golden/<name>.* from the same entry.
type goldenCase struct {
	Name          string            `json:"name"`
	About         string            `json:"about"`
	Dirs          []string          `json:"dirs"`
	Files         map[string]string `json:"files"`
	Symlinks      map[string]string `json:"symlinks"`
	Env           map[string]string `json:"env"`
	RunSh         string            `json:"run_sh"`
	WorkspaceRoot string            `json:"workspace_root"`
	Workspace     string            `json:"workspace"`
	Spec          string            `json:"spec"`
}

var rawByte = regexp.MustCompile(`<x([0-9a-f]{2})>`)

// expand substitutes the case root and turns <xHH> into the byte 0xHH.
func expand(s, root string) string {
	s = strings.ReplaceAll(s, "{root}", root)
	return rawByte.ReplaceAllStringFunc(s, func(m string) string {
		b, _ := strconv.ParseUint(m[2:4], 16, 8)
		return string([]byte{byte(b)})
	})
}

func loadCases(t *testing.T) []goldenCase {
	t.Helper()
	raw, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Cases
}

// buildTree creates the case's tree at its fixed root (the reference saw
// the same absolute paths) and removes it when the test ends.
func buildTree(t *testing.T, c goldenCase) string {
	t.Helper()
	root := "/tmp/loki-seatbelt-golden-" + c.Name
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	for _, d := range c.Dirs {
		if err := os.MkdirAll(expand(root+"/"+d, root), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for f, content := range c.Files {
		if err := os.WriteFile(expand(root+"/"+f, root), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range c.Symlinks {
		if err := os.Symlink(expand(target, root), expand(root+"/"+link, root)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func mapLookup(env map[string]string) hostbound.Lookup {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// requireGoldenMachine checks that this machine has the system paths and
// devices the goldens were generated with: the profile depends on them.
func requireGoldenMachine(t *testing.T) {
	t.Helper()
	raw, err := os.ReadFile("testdata/golden/machine.json")
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		SystemReadPaths  map[string]string `json:"system_read_paths"`
		SystemChildPaths map[string]string `json:"system_child_paths"`
		Present          []string          `json:"present"`
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	resolved := func(paths []string, dirOnly bool) map[string]string {
		out := map[string]string{}
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil || (dirOnly && !fi.IsDir()) {
				continue
			}
			r, err := filepath.EvalSymlinks(p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = r
		}
		return out
	}
	var present []string
	for _, p := range append(append([]string(nil), devices...), "/dev/fd") {
		if exists(p) {
			present = append(present, p)
		}
	}
	got := [3]any{resolved([]string{"/System", "/usr", "/bin", "/sbin", "/Library/Apple", "/private/etc",
		"/private/var/db/timezone", "/private/var/select"}, false),
		resolved([]string{"/usr/bin", "/bin", "/usr/sbin", "/sbin"}, true), present}
	wantAll := [3]any{want.SystemReadPaths, want.SystemChildPaths, want.Present}
	if !reflect.DeepEqual(got, wantAll) {
		msg := "this machine's system paths differ from those the goldens were made on; regenerate them (testdata/README.md)"
		if testutil.InCI() {
			t.Fatalf("%s: got %v, golden machine %v", msg, got, wantAll)
		}
		t.Skip(msg)
	}
}

// TestProfileGolden proves the profile is byte-for-byte the reference's.
func TestProfileGolden(t *testing.T) {
	requireGoldenMachine(t)
	for _, c := range loadCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			root := buildTree(t, c)
			env := map[string]string{}
			for k, v := range c.Env {
				env[k] = expand(v, root)
			}
			w, err := hostbound.ForWorkspace(mapLookup(env), expand(c.Workspace, root), expand(c.RunSh, root), expand(c.Spec, root))
			if err != nil {
				t.Fatalf("%s: %v", c.About, err)
			}
			want, err := os.ReadFile("testdata/golden/" + c.Name + ".sb")
			if err != nil {
				t.Fatal(err)
			}
			if got := Profile(w); !bytes.Equal(got, want) {
				t.Errorf("%s: profile differs from the reference\n--- got\n%s\n--- want\n%s", c.About, got, want)
			}
		})
	}
}

// TestIdentityGolden proves config_sha256 and the joined fields are the
// reference's bytes, including escaped non-UTF-8 and non-ASCII paths.
func TestIdentityGolden(t *testing.T) {
	for _, c := range loadCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			root := buildTree(t, c)
			env := map[string]string{}
			for k, v := range c.Env {
				env[k] = expand(v, root)
			}
			id, err := hostbound.IdentityOf(mapLookup(env), expand(c.WorkspaceRoot, root), expand(c.RunSh, root))
			if err != nil {
				t.Fatal(err)
			}
			got, err := canonjson.MarshalIndent(id.Map())
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile("testdata/golden/" + c.Name + ".identity.json")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(append(got, '\n'), want) {
				t.Errorf("identity differs from the reference\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}
