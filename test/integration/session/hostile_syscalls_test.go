//go:build linux

package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// hostileWant is what the session's syscall policy answers each attempt
// of test/hostile's plant and surface (docs/confinement.md, "The syscall policy").
var hostileWant = map[string]string{
	// a set-uid/set-gid file, every way a mode is set
	"chmod": "EPERM", "fchmod": "EPERM", "fchmodat": "EPERM", "fchmodat2": "EPERM",
	"open": "EPERM", "tmpfile": "EPERM", "mknod": "EPERM",
	"openat2": "ENOSYS", // its mode is out of a filter's reach: libc falls back
	// a file capability: no xattr is set at all
	"setcap": "ENOTSUP", "setxattr": "ENOTSUP",
	// still allowed
	"chmod-plain": "ok", "open-plain": "ok", "mkdir-in-sgid": "ok",
	// kernel surface
	"io_uring_setup": "EPERM", "userfaultfd": "EPERM", "perf_event_open": "EPERM",
}

// scenarioHostileSyscalls: a peer that tries to plant a set-uid or set-gid
// file or a file capability in a writable host dir (issue 32: a root
// peer left W/s 6755 root:root, euid 0 when run by any user) and to
// reach io_uring, userfaultfd and perf events is refused every time, on
// every way the backend runs the peer, and nothing set-uid, set-gid or
// capable is left on the host.
func scenarioHostileSyscalls(t *testing.T, b backend) {
	if len(b.hostileFlags) == 0 {
		t.Fatalf("%s names no way to run the hostile peer (hostileFlags)", b.Name)
	}
	probe := hostile(t)
	for _, flags := range b.hostileFlags {
		name := strings.Join(flags, " ")
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			w := t.TempDir()
			// Reachable and writable by a --user peer; a set-gid dir to
			// create a dir in.
			if err := os.Chmod(filepath.Dir(w), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(w, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(w, "sgid"), 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(filepath.Join(w, "sgid"), 0o2777); err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(w, "hostile")
			if err := copyFile(probe, bin); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"--wait-after-eof", "--write", w}, flags...)
			r := run(t, supervise(t, b, args, "/bin/sh", "-c", bin+" plant "+w+"; "+bin+" surface"), "", generous)
			if r.code != 0 {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			got := map[string]string{}
			for _, l := range strings.Split(r.stdout, "\n") {
				if k, v, ok := strings.Cut(l, "="); ok {
					got[k] = v
				}
			}
			for k, v := range hostileWant {
				if got[k] != v {
					t.Errorf("%s: %q, want %q", k, got[k], v)
				}
			}
			if len(got) != len(hostileWant) {
				t.Errorf("peer said %q", r.stdout)
			}
			for _, bad := range plantedFiles(t, w) {
				t.Errorf("left on the host: %s", bad)
			}
		})
	}
}

// plantedFiles lists every file under dir that is set-uid or set-gid
// (a directory's set-gid grants nothing and is left out) or carries a
// file capability.
func plantedFiles(t *testing.T, dir string) []string {
	var bad []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if !fi.IsDir() && fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
			bad = append(bad, fmt.Sprintf("%s %v", p, fi.Mode()))
		}
		if _, err := unix.Lgetxattr(p, "security.capability", make([]byte, 64)); !errors.Is(err, unix.ENODATA) {
			bad = append(bad, fmt.Sprintf("%s security.capability (%v)", p, err))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bad
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o755)
}
