// Package seatbelttest loads the reference-generated Seatbelt goldens of
// internal/execution/sandbox/seatbelt/testdata for tests: the cases, the
// directory tree each was generated in, and the machine it was generated
// on. It is shared by the package's unit tests and the binary-level tests,
// so both judge the profile against one definition of the inputs.
// ShortRoot is the temp root the seatbelt and provider packages' own
// fixtures are laid out in.
//
// Guarantees: a case's tree is built at the same absolute root the
// reference saw (/tmp/loki-seatbelt-golden-<name>) and removed when the
// test ends; RequireMachine skips, or fails under CI=true, on a machine
// whose system paths or devices differ from the goldens' (the profile
// depends on them).
package seatbelttest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
)

// Case is one entry of cases.json: a directory tree to build under a fixed
// root and the environment and arguments to evaluate there. The reference
// produced golden/<name>.sb and golden/<name>.identity.json from it.
type Case struct {
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

// Expand substitutes the case root for {root} and turns <xHH> into the raw
// byte 0xHH.
func Expand(s, root string) string {
	s = strings.ReplaceAll(s, "{root}", root)
	return rawByte.ReplaceAllStringFunc(s, func(m string) string {
		b, _ := strconv.ParseUint(m[2:4], 16, 8)
		return string([]byte{byte(b)})
	})
}

// Load reads testdata/cases.json.
func Load(t testing.TB, testdata string) []Case {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testdata, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []Case `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Cases
}

// Build creates the case's tree at its fixed root and returns the root.
func (c Case) Build(t testing.TB) string {
	t.Helper()
	root := "/tmp/loki-seatbelt-golden-" + c.Name
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	for _, d := range c.Dirs {
		if err := os.MkdirAll(Expand(root+"/"+d, root), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for f, content := range c.Files {
		if err := os.WriteFile(Expand(root+"/"+f, root), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range c.Symlinks {
		if err := os.Symlink(Expand(target, root), Expand(root+"/"+link, root)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// Environ is the case's environment with the root substituted.
func (c Case) Environ(root string) map[string]string {
	env := make(map[string]string, len(c.Env))
	for k, v := range c.Env {
		env[k] = Expand(v, root)
	}
	return env
}

// Want reads a golden file, e.g. Want(t, testdata, c.Name+".sb").
func Want(t testing.TB, testdata, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdata, "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// RequireMachine checks that this machine has the system paths and the
// devices (of the profile's device list, plus /dev/fd) the goldens were
// generated with.
func RequireMachine(t testing.TB, testdata string, devices []string) {
	t.Helper()
	var want struct {
		SystemReadPaths  map[string]string `json:"system_read_paths"`
		SystemChildPaths map[string]string `json:"system_child_paths"`
		Present          []string          `json:"present"`
	}
	if err := json.Unmarshal(Want(t, testdata, "machine.json"), &want); err != nil {
		t.Fatal(err)
	}
	var present []string
	for _, p := range append(append([]string(nil), devices...), "/dev/fd") {
		if _, err := os.Stat(p); err == nil {
			present = append(present, p)
		}
	}
	got := [3]any{resolved(t, []string{"/System", "/usr", "/bin", "/sbin", "/Library/Apple", "/private/etc",
		"/private/var/db/timezone", "/private/var/select"}, false),
		resolved(t, []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin"}, true), present}
	wantAll := [3]any{want.SystemReadPaths, want.SystemChildPaths, want.Present}
	if !reflect.DeepEqual(got, wantAll) {
		msg := "this machine's system paths differ from those the goldens were made on; regenerate them (internal/execution/sandbox/seatbelt/testdata/README.md)"
		if testutil.InCI() {
			t.Fatalf("%s: got %v, golden machine %v", msg, got, wantAll)
		}
		t.Skip(msg)
	}
}

// resolved maps each existing path (a directory, if dirOnly) to its target.
func resolved(t testing.TB, paths []string, dirOnly bool) map[string]string {
	t.Helper()
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
