//go:build linux

package namespace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/testutil"
)

// TestIdmapTrees: above each path the peer must reach, the topmost dir
// it could not search is added read-only, once, and nothing else: not
// under a writable tree (that shows root's 0700 dirs as the peer's), not
// twice for HOME inside it. Before, only HOME was: a cwd in a 0700 dir
// elsewhere was refused.
func TestIdmapTrees(t *testing.T) {
	// A private user namespace is root's; /tmp is private (never a blocker).
	testutil.RequireRoot(t)
	base, err := os.MkdirTemp("/var/tmp", "loki-idmap-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := func(rel string, mode os.FileMode) string {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	team, proj := dir("team", 0o700), dir("team/proj", 0o755)
	other, state := dir("other", 0o700), dir("other/state", 0o700)
	nested := dir("a", 0o700)
	dir("a/b", 0o700)
	deepProj := dir("a/b/proj", 0o755)
	open := dir("open", 0o755)
	openHome := dir("open/home", 0o700)
	shared := dir("shared", 0o755)
	inShared := dir("shared/closed/proj", 0o755)
	dir("shared/closed", 0o700)
	closedHome := dir("c", 0o700)
	homeInClosed := dir("c/home", 0o755)

	for _, tc := range []struct {
		name  string
		write []string
		home  string
		want  []string // path, "ro " prefix when read-only
	}{
		{"cwd in a 0700 dir, no HOME", []string{proj}, "", []string{"ro " + team, proj}},
		{"cwd and --write in two 0700 dirs, HOME elsewhere", []string{proj, state}, openHome,
			[]string{"ro " + team, "ro " + other, "ro " + openHome, proj, state}},
		{"HOME is the blocker", []string{proj}, team, []string{"ro " + team, proj}},
		{"nested blockers: the topmost", []string{deepProj}, "", []string{"ro " + nested, deepProj}},
		{"under a writable tree: no blocker", []string{shared, inShared}, "", []string{shared, inShared}},
		{"HOME in a 0700 dir", []string{open}, homeInClosed, []string{open, "ro " + closedHome}},
		{"nothing closed", []string{open}, "", []string{open}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			anew := anewDirs(confine.PrivateHostDirs())
			for _, tr := range idmapTrees(tc.write, tc.home, anew) {
				p := tr.Path
				if tr.RO {
					p = "ro " + p
				}
				got = append(got, p)
			}
			want := slices.Clone(tc.want)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("trees %q, want %q", got, want)
			}
			if err := checkReachable(idmapTrees(tc.write, tc.home, anew), anew); err != nil {
				t.Errorf("refused: %v", err)
			}
		})
	}

	t.Run("another user's 0700 dir on the way", func(t *testing.T) {
		alice := dir("team/alice", 0o700)
		if err := os.Chown(alice, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		ws := dir("team/alice/proj", 0o755)
		anew := anewDirs(confine.PrivateHostDirs())
		err := checkReachable(idmapTrees([]string{ws}, "", anew), anew)
		if err == nil || !strings.Contains(err.Error(), alice+" is another user's") {
			t.Fatalf("err %v, want %s named", err, alice)
		}
	})
}
