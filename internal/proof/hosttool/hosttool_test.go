//go:build unix

package hosttool

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestFind: a tool planted in a directory others can write (here under
// the world-writable temp dir, as a runner's ~/.cargo/bin would be) is
// never taken, nor one beneath a directory declared runner-writable.
func TestFind(t *testing.T) {
	sys, err := filepath.EvalSymlinks("/usr/bin/sh")
	if err != nil {
		t.Skip("no /usr/bin/sh")
	}
	planted := t.TempDir()
	if err := os.WriteFile(filepath.Join(planted, "sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		dirs     []string
		writable []string
		want     string
	}{
		{"planted dir first is skipped", []string{planted, "/usr/bin"}, nil, sys},
		{"system dir", []string{"/usr/bin"}, nil, sys},
		{"writable root covers it", []string{"/usr/bin"}, []string{"/usr"}, ""},
		{"only the planted one", []string{planted}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := find("sh", tc.dirs, tc.writable)
			if got != tc.want || (tc.want == "") != errors.Is(err, ErrNotFound) {
				t.Errorf("find = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestEnv(t *testing.T) {
	got := Env([]string{"A=1", "PATH=/home/x/.cargo/bin:/usr/bin", "B=2"})
	if len(got) != 3 || got[2] != "PATH="+SafePath || got[0] != "A=1" || got[1] != "B=2" {
		t.Errorf("Env = %q", got)
	}
}
