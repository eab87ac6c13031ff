//go:build linux

package confine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/testutil"
	"github.com/loki-sh/loki/internal/testutil/backends"
)

// hostDir makes a directory outside /tmp (which a confined session
// replaces), owned by uid so that only the mount, never the file mode,
// can refuse that uid's writes.
func hostDir(t *testing.T, uid int) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "loki-confine-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeOwned(t *testing.T, path, data string, uid int) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// writeProbe defines w FILE NAME: append to FILE, print NAME=written or
// NAME=refused.
const writeProbe = `
w() { if (printf x >> "$1") 2>/dev/null; then echo "$2=written"; else echo "$2=refused"; fi; }
`

// fsProbe: $1 the workspace (cwd), $2 a host dir not named, $3 a --write
// dir, $4 a --hide dir, $5 a file of the host's /tmp, $6 a symlink there.
const fsProbe = writeProbe + `
w "$1/out" cwd
w "$2/file" other
w "$2/new" other_new
w "$3/out" write
w /etc/loki-confine-probe etc
w "/tmp/private-${1##*/}" tmp
echo "hostfile=$(cat "$5" 2>/dev/null)"
if [ -L "$6" ]; then echo hostlink=visible; else echo hostlink=absent; fi
echo "hidden=$(ls -A "$4" 2>/dev/null | wc -l)"
echo "secret=$(cat "$4/secret" 2>/dev/null)"
echo "devs=$(ls /dev | wc -l)"
if [ -e /dev/mem ] || [ -e /dev/kmsg ]; then echo hostdev=visible; else echo hostdev=absent; fi
if (echo x > /dev/null) 2>/dev/null; then echo null=ok; else echo null=broken; fi
`

// TestFilesystem: by default the host's files are read-only to the peer
// (also a file it owns), only the cwd and --write are writable, /tmp is
// private, /dev holds only the usual devices, --hide shows an empty dir;
// --fs host is the control case.
func TestFilesystem(t *testing.T) {
	for _, b := range rows() {
		if !strings.HasPrefix(b.Name, "namespace") {
			continue // the oci backend's filesystem is its rootfs: TestFilesystemOCI
		}
		uid := 0
		if b.Unprivileged {
			uid = testutil.Nobody
		}
		for _, mode := range []string{"confined", "host"} {
			t.Run(b.Name+"/"+mode, func(t *testing.T) {
				ws, other, wr, hid := hostDir(t, uid), hostDir(t, uid), hostDir(t, uid), hostDir(t, uid)
				writeOwned(t, filepath.Join(other, "file"), "orig", uid)
				writeOwned(t, filepath.Join(hid, "secret"), "s3cret", uid)
				tmpFile := filepath.Join(os.TempDir(), "loki-confine-host-"+filepath.Base(ws))
				writeOwned(t, tmpFile, "hosttmp", uid)
				t.Cleanup(func() { os.Remove(tmpFile) })
				tmpLink := tmpFile + "-link"
				if err := os.Symlink(tmpFile, tmpLink); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.Remove(tmpLink) })
				flags := []string{"--cwd", ws, "--hide", hid}
				if mode == "confined" {
					flags = append(flags, "--write", wr)
				} else {
					flags = append(flags, "--fs", "host")
				}
				t.Cleanup(func() { os.Remove("/tmp/private-" + filepath.Base(ws)) })
				code, out, stderr := session(t, b, flags, "sh", "-c", fsProbe, "probe", ws, other, wr, hid, tmpFile, tmpLink)
				if code != 0 {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
				r := results(out)
				want := map[string]string{"cwd": "written", "write": "written", "hidden": "0", "secret": "", "null": "ok"}
				if mode == "confined" {
					for k, v := range map[string]string{"other": "refused", "other_new": "refused", "etc": "refused", "tmp": "written", "hostfile": "", "hostlink": "absent", "hostdev": "absent"} {
						want[k] = v
					}
				} else {
					for k, v := range map[string]string{"other": "written", "other_new": "written", "hostfile": "hosttmp", "hostlink": "visible", "hostdev": "visible"} {
						want[k] = v
					}
				}
				for k, v := range want {
					if r[k] != v {
						t.Errorf("%s=%q, want %q (output %q)", k, r[k], v, out)
					}
				}
				got, _ := os.ReadFile(filepath.Join(other, "file"))
				if mode == "confined" {
					if string(got) != "orig" {
						t.Errorf("the host file changed: %q", got)
					}
					if _, err := os.Stat(filepath.Join(other, "new")); err == nil {
						t.Error("the peer created a file in a dir it was not given")
					}
					if _, err := os.Stat("/tmp/private-" + filepath.Base(ws)); err == nil {
						t.Error("the peer's /tmp is the host's")
					}
				}
				if _, err := os.Stat("/etc/loki-confine-probe"); err == nil {
					os.Remove("/etc/loki-confine-probe")
					if mode == "confined" {
						t.Error("the peer created /etc/loki-confine-probe on the host")
					}
				}
				if b, _ := os.ReadFile(filepath.Join(ws, "out")); string(b) != "x" {
					t.Errorf("the workspace write did not reach the host: %q", b)
				}
			})
		}
	}
}

// hostMount mounts a tmpfs of mode 0777 at dir on the host, read-only
// when ro, for the test's length.
func hostMount(t *testing.T, dir string, ro bool) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	flags := uintptr(0)
	if ro {
		flags = unix.MS_RDONLY
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", flags, "mode=0777,size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs on the host: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
}

// TestSubmountFlags: a mount below the cwd keeps its own flags (one the
// host mounted writable stays writable, a read-only one read-only), and
// one below a dir the session was not given is read-only.
func TestSubmountFlags(t *testing.T) {
	for _, b := range namespaceRows() {
		t.Run(b.Name, func(t *testing.T) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to mount on the host")
			}
			ws, other := hostDir(t, peerUID(b)), hostDir(t, peerUID(b))
			hostMount(t, filepath.Join(ws, "rw"), false)
			hostMount(t, filepath.Join(ws, "ro"), true)
			hostMount(t, filepath.Join(other, "rw"), false)
			probe := writeProbe + `w "$1/rw/f" cwd_rw; w "$1/ro/f" cwd_ro; w "$2/rw/f" other_rw`
			code, out, stderr := session(t, b, []string{"--cwd", ws}, "sh", "-c", probe, "probe", ws, other)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			wantResults(t, out, map[string]string{"cwd_rw": "written", "cwd_ro": "refused", "other_rw": "refused"})
		})
	}
}

// TestFilesystemOCI: the container sees its read-only rootfs; --write
// binds a host dir writable at its path, --hide covers a path of the
// rootfs, --fs host is refused (the container never sees the host root).
func TestFilesystemOCI(t *testing.T) {
	for _, b := range rows() {
		if !strings.HasPrefix(b.Name, "oci") {
			continue
		}
		t.Run(b.Name, func(t *testing.T) {
			b.Require(t)
			wr := hostDir(t, 0)
			hid := filepath.Join(rootfs(t), "etc", "hidden-"+filepath.Base(wr))
			if err := os.MkdirAll(hid, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(hid) })
			writeOwned(t, filepath.Join(hid, "secret"), "s3cret", 0)
			inside := "/etc/" + filepath.Base(hid)
			flags := []string{"--write", wr, "--hide", inside}
			if b.Name == "oci-runc" {
				// runc 1.1 cannot idmap a mount, so a writable bind
				// needs the host's ids (TestPrivateUserNamespaceRefusals).
				flags = append(flags, "--userns", "host")
			}
			code, out, stderr := session(t, b, flags, "sh", "-c", fsProbe, "probe", "/nonexistent", "/bin", wr, inside, "/nonexistent")
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			r := results(out)
			for k, v := range map[string]string{"write": "written", "etc": "refused", "other_new": "refused", "tmp": "written", "hidden": "0", "secret": "", "null": "ok"} {
				if r[k] != v {
					t.Errorf("%s=%q, want %q (output %q)", k, r[k], v, out)
				}
			}
			if got, _ := os.ReadFile(filepath.Join(wr, "out")); string(got) != "x" {
				t.Errorf("the --write dir's file did not reach the host: %q", got)
			}
			code, _, stderr = session(t, b, []string{"--fs", "host"}, "true")
			if code != 127 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "--fs host") {
				t.Errorf("--fs host: exit %d, stderr %q; want 127 and one line", code, stderr)
			}
		})
	}
}

// dockerFSProbe: $WR is a --write dir, /data a --bind whose sub/ is
// hidden, $TOKEN a hidden file (a host file bound at the same path).
const dockerFSProbe = `
w() { if (printf x >> "$1") 2>/dev/null; then echo "$2=written"; else echo "$2=refused"; fi; }
w "$WR/out" write
w /etc/loki-confine-probe etc
echo "hidden=$(ls -A /data/sub 2>/dev/null | wc -l)"
echo "secret=$(cat /data/sub/secret 2>/dev/null)"
echo "data=$(cat /data/visible 2>/dev/null)"
echo "token=$(cat "$TOKEN" 2>/dev/null)"
`

// TestFilesystemDocker: on the docker backend --write PATH is that host
// path, writable, at the same path in the container, and --hide PATH
// empties the container's PATH (a dir inside a --bind, and a file); the
// image's root stays read-only. --fs host is refused in one line.
func TestFilesystemDocker(t *testing.T) {
	b := backends.Get("docker")
	wr, data, tok := hostDir(t, 0), hostDir(t, 0), hostDir(t, 0)
	writeOwned(t, filepath.Join(data, "visible"), "seen", 0)
	if err := os.Mkdir(filepath.Join(data, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeOwned(t, filepath.Join(data, "sub", "secret"), "s3cret", 0)
	token := filepath.Join(tok, "token")
	writeOwned(t, token, "t0ken", 0)
	flags := []string{"--write", wr, "--bind", data + ":/data:ro", "--bind", tok + ":" + tok + ":ro",
		"--hide", "/data/sub", "--hide", token, "--env", "WR=" + wr, "--env", "TOKEN=" + token}
	code, out, stderr := session(t, b, flags, "sh", "-c", dockerFSProbe)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	r := results(out)
	for k, v := range map[string]string{"write": "written", "etc": "refused", "hidden": "0", "secret": "", "data": "seen", "token": ""} {
		if r[k] != v {
			t.Errorf("%s=%q, want %q (output %q)", k, r[k], v, out)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(wr, "out")); string(got) != "x" {
		t.Errorf("the --write dir's file did not reach the host: %q", got)
	}
	code, _, stderr = session(t, b, []string{"--fs", "host"}, "true")
	if code != 127 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "--fs host") {
		t.Errorf("--fs host: exit %d, stderr %q; want 127 and one line", code, stderr)
	}
}
