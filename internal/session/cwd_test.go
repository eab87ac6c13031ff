//go:build unix

package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckHostCwd(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, cwd, want string
	}{
		{"dir", dir, ""},
		{"missing leaf", filepath.Join(dir, "x"), filepath.Join(dir, "x") + " does not exist"},
		{"missing parent", filepath.Join(dir, "a", "b"), ": " + filepath.Join(dir, "a") + " does not exist"},
		{"file", file, "is not a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckHostCwd(tc.cwd)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrCwd) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckHostCwd(%s) = %v, want ErrCwd naming %q", tc.cwd, err, tc.want)
			}
		})
	}
}
