//go:build unix

package launch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// LookPath finds what execvp would run: the first regular executable on
// the launch's PATH, passing over what exists but cannot run (a FIFO, a
// directory, a file without x), and says which of "not found" and "not
// executable" a failure was.
func TestLookPath(t *testing.T) {
	cwd := t.TempDir()
	bin := filepath.Join(cwd, "bin")
	other := filepath.Join(cwd, "other")
	for _, d := range []string{bin, other, filepath.Join(bin, "adir")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for name, mode := range map[string]os.FileMode{"tool": 0o700, "plain": 0o600} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(other, "tool"), 0o700); err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(bin, "tool")
	for _, tc := range []struct {
		name, arg0, path string
		want             string // "" = refused with err
		err              error
	}{
		{"absolute", tool, "", tool, nil},
		{"relative to cwd", "bin/tool", "", tool, nil},
		{"on PATH", "tool", "/nonexistent:" + bin, tool, nil},
		{"relative PATH entry is cwd-relative", "tool", "bin", tool, nil},
		{"a FIFO first is passed over", "tool", other + ":" + bin, tool, nil},
		{"default PATH", "sh", DefaultPath, "/bin/sh", nil},
		{"not executable", "plain", bin, "", fs.ErrPermission},
		{"directory", "adir", bin, "", fs.ErrPermission},
		{"only a FIFO", "tool", other, "", fs.ErrPermission},
		{"missing", "nope", bin, "", fs.ErrNotExist},
		{"missing with a slash", "bin/nope", "", "", fs.ErrNotExist},
		{"a directory with a slash", "bin/adir", "", "", fs.ErrPermission},
	} {
		got, err := LookPath(tc.arg0, tc.path, cwd)
		if tc.want == "" {
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: LookPath = %q, %v; want %v", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: LookPath = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}
