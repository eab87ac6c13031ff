package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// UsrImage is the docker image made from UsrRootfs.
const UsrImage = "loki-test:usr"

// UsrRootfs makes a root filesystem holding only mount points and the
// merged-/usr symlinks, for a container that binds the host's /usr
// (node and its libraries) read-only. It fails on a host whose /bin,
// /lib and /lib64 are not links into /usr.
func UsrRootfs(t testing.TB) string {
	t.Helper()
	for _, l := range []string{"/bin", "/lib", "/lib64"} {
		if target, err := os.Readlink(l); err != nil || strings.TrimPrefix(target, "/") != "usr"+l {
			t.Fatalf("%s is not a symlink to usr%s (%q, %v): the container variants need a merged-/usr host", l, l, target, err)
		}
	}
	root := t.TempDir()
	// As root the container has a user namespace of its own, whose root
	// is "others" to the host: it must be able to reach the rootfs. The
	// test's own dirs, never the host's /tmp above them.
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"usr", "proc", "dev", "sys", "tmp", "etc"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range []string{"bin", "lib", "lib64", "sbin"} {
		if err := os.Symlink("usr/"+l, filepath.Join(root, l)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// RequireUsrImage imports UsrRootfs as UsrImage when the engine has no
// such image, and returns its name.
func RequireUsrImage(t testing.TB, docker string) string {
	t.Helper()
	if exec.Command(docker, "image", "inspect", UsrImage).Run() != nil {
		imp := exec.Command("sh", "-c", `tar -C "$1" -c . | "$2" import - "$3"`, "sh", UsrRootfs(t), docker, UsrImage)
		if out, err := imp.CombinedOutput(); err != nil {
			t.Fatalf("docker import %s: %v\n%s", UsrImage, err, out)
		}
	}
	return UsrImage
}
