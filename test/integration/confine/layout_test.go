//go:build linux

package confine

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// ownedDir makes dir (mode) owned by uid.
func ownedDir(t *testing.T, dir string, uid int, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
	return dir
}

// homeIn makes a HOME of uid's under parent (outside /tmp unless parent
// is under it), with a config file in it.
func homeIn(t *testing.T, parent string, uid int, mode os.FileMode) string {
	t.Helper()
	home, err := os.MkdirTemp(parent, "loki-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	ownedDir(t, home, uid, mode)
	ownedDir(t, filepath.Join(home, ".claude"), uid, 0o700)
	writeOwned(t, filepath.Join(home, ".config-probe"), "conf", uid)
	return home
}

// layoutProbe: $1 a dir to write in, $2 the file of HOME to read.
const layoutProbe = `
if (printf x >> "$1/out") 2>/dev/null; then echo write=ok; else echo write=refused; fi
echo "home=$(cat "$2" 2>/dev/null)"
echo "cwd=$(pwd)"
`

// TestAgentLayouts: the places an agent and its project live in practice
// (the project inside a 0700 HOME, state in ~/.claude, a cwd in /dev/shm,
// HOME under /tmp as in CI) start under the default session, as root
// (private user namespace) and as nobody, and the peer writes where it
// was given and reads its HOME. Before: as root a cwd or --write inside
// a 0700 HOME failed at "mount point ...: permission denied" (127), a
// cwd in /dev/shm at launch-cwd (125), and without root a HOME under
// /tmp was missing from the private /tmp.
func TestAgentLayouts(t *testing.T) {
	for _, b := range namespaceRows() {
		uid := peerUID(b)
		for _, tc := range []struct {
			name string
			// layout returns HOME, the session's cwd, the flags, and the
			// dir the peer must write.
			layout func(t *testing.T) (home, cwd string, flags []string, dir string)
		}{
			{"cwd-in-0700-home", func(t *testing.T) (string, string, []string, string) {
				home := homeIn(t, "/var/tmp", uid, 0o700)
				proj := ownedDir(t, filepath.Join(home, "proj"), uid, 0o755)
				return home, proj, nil, proj
			}},
			{"cwd-in-0755-home", func(t *testing.T) (string, string, []string, string) {
				home := homeIn(t, "/var/tmp", uid, 0o755)
				proj := ownedDir(t, filepath.Join(home, "proj"), uid, 0o700)
				return home, proj, nil, proj
			}},
			{"write-state-in-0700-home", func(t *testing.T) (string, string, []string, string) {
				home := homeIn(t, "/var/tmp", uid, 0o700)
				state := filepath.Join(home, ".claude")
				return home, "/", []string{"--write", state}, state
			}},
			{"cwd-in-dev-shm", func(t *testing.T) (string, string, []string, string) {
				home := homeIn(t, "/var/tmp", uid, 0o700)
				shm, err := os.MkdirTemp("/dev/shm", "loki-cwd-")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(shm) })
				ownedDir(t, shm, uid, 0o700)
				return home, shm, nil, shm
			}},
			{"home-under-tmp", func(t *testing.T) (string, string, []string, string) {
				home := homeIn(t, os.TempDir(), uid, 0o700)
				proj := hostDir(t, uid)
				return home, proj, []string{"--write", filepath.Join(home, ".claude")}, filepath.Join(home, ".claude")
			}},
			{"project-in-home-under-tmp", func(t *testing.T) (string, string, []string, string) {
				home := homeIn(t, os.TempDir(), uid, 0o700)
				proj := ownedDir(t, filepath.Join(home, "proj"), uid, 0o755)
				return home, proj, nil, proj
			}},
		} {
			t.Run(b.Name+"/"+tc.name, func(t *testing.T) {
				home, cwd, flags, dir := tc.layout(t)
				flags = append([]string{"--cwd", cwd}, flags...)
				code, out, stderr := sessionEnv(t, b, []string{"HOME=" + home}, flags, "sh", "-c", layoutProbe, "probe", dir, filepath.Join(home, ".config-probe"))
				if code != 0 {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
				r := results(out)
				for k, v := range map[string]string{"write": "ok", "home": "conf", "cwd": cwd} {
					if r[k] != v {
						t.Errorf("%s=%q, want %q (output %q, stderr %q)", k, r[k], v, out, stderr)
					}
				}
				fi, err := os.Stat(filepath.Join(dir, "out"))
				if err != nil {
					t.Fatalf("the write did not reach the host: %v", err)
				}
				if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != uid {
					t.Errorf("the peer's file is owned by %d on the host, want %d", st.Uid, uid)
				}
			})
		}
	}
}

// closedProbe: $1 the cwd, $2 the --write dir, $3 and $4 the 0700 dirs
// holding them (with a file f each, and $3/sib/f a sibling of the cwd).
const closedProbe = writeProbe + `
w "$1/out" cwd
w "$2/out" write
w "$3/f" closed_file
w "$3/new" closed_new
w "$3/sib/f" sibling
w "$3/sib/new" sibling_new
w "$4/new" other_new
echo "closed_read=$(cat "$3/f" 2>/dev/null)"
echo "sibling_read=$(cat "$3/sib/f" 2>/dev/null)"
echo "other_read=$(cat "$4/f" 2>/dev/null)"
echo "pwd=$(pwd)"
`

// TestWritablePathsInClosedDirs: a cwd inside a 0700 dir and a --write
// inside another, neither under HOME (HOME unset, or under /tmp as in
// CI), start under the default session, as root (private user
// namespace) and as nobody. The peer writes there and nowhere else: the
// 0700 dirs and the cwd's sibling are read-only to it, as the rest of a
// 0700 HOME holding the cwd is (the HOME=closed dir row, the case that
// worked before, must give the same answers). Before, as root every row
// exited 127 ("... is not searchable by others"): only HOME was shown
// through an idmapped mount above a writable path.
func TestWritablePathsInClosedDirs(t *testing.T) {
	for _, b := range namespaceRows() {
		uid := peerUID(b)
		for _, homeCase := range []string{"unset", "under-tmp", "elsewhere", "is-the-closed-dir"} {
			t.Run(b.Name+"/home-"+homeCase, func(t *testing.T) {
				base := hostDir(t, 0)
				closed := ownedDir(t, filepath.Join(base, "team"), uid, 0o700)
				proj := ownedDir(t, filepath.Join(closed, "proj"), uid, 0o755)
				ownedDir(t, filepath.Join(closed, "sib"), uid, 0o755)
				writeOwned(t, filepath.Join(closed, "f"), "closed", uid)
				writeOwned(t, filepath.Join(closed, "sib", "f"), "sibling", uid)
				other := ownedDir(t, filepath.Join(base, "other"), uid, 0o700)
				state := ownedDir(t, filepath.Join(other, "state"), uid, 0o700)
				writeOwned(t, filepath.Join(other, "f"), "other", uid)
				env := []string{"HOME"}
				switch homeCase {
				case "under-tmp":
					env = []string{"HOME=" + homeIn(t, os.TempDir(), uid, 0o700)}
				case "elsewhere":
					env = []string{"HOME=" + homeIn(t, "/var/tmp", uid, 0o755)}
				case "is-the-closed-dir":
					env = []string{"HOME=" + closed}
				}
				code, out, stderr := sessionEnv(t, b, env, []string{"--cwd", proj, "--write", state},
					"sh", "-c", closedProbe, "probe", proj, state, closed, other)
				if code != 0 {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
				r := results(out)
				for k, v := range map[string]string{
					"cwd": "written", "write": "written", "pwd": proj,
					"closed_file": "refused", "closed_new": "refused", "sibling": "refused",
					"sibling_new": "refused", "other_new": "refused",
					"closed_read": "closed", "sibling_read": "sibling", "other_read": "other",
				} {
					if r[k] != v {
						t.Errorf("%s=%q, want %q (output %q, stderr %q)", k, r[k], v, out, stderr)
					}
				}
				for _, p := range []string{filepath.Join(proj, "out"), filepath.Join(state, "out")} {
					fi, err := os.Stat(p)
					if err != nil {
						t.Errorf("the write did not reach the host: %v", err)
						continue
					}
					if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != uid {
						t.Errorf("%s is owned by %d on the host, want %d", p, st.Uid, uid)
					}
				}
				for _, p := range []string{"new", "sib/new"} {
					if _, err := os.Lstat(filepath.Join(closed, p)); err == nil {
						t.Errorf("%s was made on the host", filepath.Join(closed, p))
					}
				}
				if _, err := os.Lstat(filepath.Join(other, "new")); err == nil {
					t.Errorf("%s was made on the host", filepath.Join(other, "new"))
				}
				for p, want := range map[string]string{filepath.Join(closed, "f"): "closed", filepath.Join(closed, "sib", "f"): "sibling"} {
					if got, _ := os.ReadFile(p); string(got) != want {
						t.Errorf("%s is %q on the host, want %q", p, got, want)
					}
				}
			})
		}
	}
}
