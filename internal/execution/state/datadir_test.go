package state

import (
	"os"
	"os/user"
	"path/filepath"
	"testing"
)

// TestDefaultStoreFollowsReference: the data dir is found as the
// reference's Path(os.environ.get("LOKI_DATA_DIR", "~/.loki")).expanduser()
// .resolve() finds it, so a dashboard and loki agree on where records are.
func TestDefaultStoreFollowsReference(t *testing.T) {
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(cwd)
	home := t.TempDir()
	root, err := user.Lookup("root")
	if err != nil {
		t.Skip("no root user in the password database")
	}
	unset := "\x00unset"
	cases := []struct {
		name, dataDir, home, want string
		fails                     bool
	}{
		{name: "unset", dataDir: unset, home: home, want: filepath.Join(home, ".loki")},
		{name: "empty is the current directory", dataDir: "", home: home, want: cwd},
		{name: "relative", dataDir: "rel/d", home: home, want: filepath.Join(cwd, "rel/d")},
		{name: "tilde", dataDir: "~/x", home: home, want: filepath.Join(home, "x")},
		{name: "tilde alone", dataDir: "~", home: home, want: home},
		{name: "empty HOME", dataDir: "~/.loki", home: "", want: "/.loki"},
		{name: "named user", dataDir: "~root/d", home: home, want: filepath.Join(root.HomeDir, "d")},
		{name: "tilde not first", dataDir: "a/~/b", home: home, want: filepath.Join(cwd, "a/~/b")},
		{name: "unknown user", dataDir: "~no-such-user-h21/d", home: home, fails: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.dataDir == unset {
				t.Setenv(EnvDataDir, "")
				os.Unsetenv(EnvDataDir)
			} else {
				t.Setenv(EnvDataDir, tc.dataDir)
			}
			t.Setenv("HOME", tc.home)
			s, err := DefaultStore()
			if tc.fails {
				if err == nil {
					t.Fatalf("DefaultStore() = %s, want an error", s.Root())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(tc.want, "dashboard", "builds"); s.Root() != want {
				t.Errorf("root %s, want %s", s.Root(), want)
			}
		})
	}
}
