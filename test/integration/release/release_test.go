package release

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
)

// makeRelease runs `make release` for this machine's platform into dir.
func makeRelease(t *testing.T, root, dir string) {
	t.Helper()
	cmd := exec.Command("make", "-s", "release", "RELEASE_DIR="+dir, "RELEASE_PLATFORMS=linux/"+runtime.GOARCH)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, out)
	}
}

func TestReleaseIsReproducibleAndRunsFromItsTarball(t *testing.T) {
	testutil.RequireRoot(t) // the quick start's default session
	testutil.RequireCommand(t, "make")
	root := testutil.ModuleRoot(t)
	a, b := t.TempDir(), t.TempDir()
	makeRelease(t, root, a)
	makeRelease(t, root, b)
	sumsA, err := os.ReadFile(filepath.Join(a, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	sumsB, _ := os.ReadFile(filepath.Join(b, "SHA256SUMS"))
	if !bytes.Equal(sumsA, sumsB) || len(sumsA) == 0 {
		t.Fatalf("two releases of one commit differ:\n%s\n%s", sumsA, sumsB)
	}
	check := exec.Command("sha256sum", "-c", "SHA256SUMS")
	check.Dir = a
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum -c: %v\n%s", err, out)
	}
	tarballs, _ := filepath.Glob(filepath.Join(a, "loki-*-linux-"+runtime.GOARCH+".tar.gz"))
	if len(tarballs) != 1 {
		t.Fatalf("tarballs: %v", tarballs)
	}

	// A user unpacks it in an empty directory and runs the quick start.
	home := t.TempDir()
	if out, err := exec.Command("tar", "-xzf", tarballs[0], "-C", home).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	dirs, _ := filepath.Glob(filepath.Join(home, "loki-*"))
	if len(dirs) != 1 {
		t.Fatalf("unpacked: %v", dirs)
	}
	top := dirs[0]
	for _, f := range []string{
		"bin/loki-init", "bin/loki-supervise", "bin/loki-kube", "bin/loki-build-supervisor", "README.md",
		"share/man/man1/loki-supervise.1", "share/man/man8/loki-init.8",
		"share/bash-completion/completions/loki-supervise",
		"share/zsh/site-functions/_loki-supervise", "share/fish/vendor_completions.d/loki-supervise.fish",
	} {
		if _, err := os.Lstat(filepath.Join(top, f)); err != nil {
			t.Errorf("tarball lacks %s", f)
		}
	}
	if out, err := exec.Command("file", filepath.Join(top, "bin/loki-init")).Output(); err == nil && !strings.Contains(string(out), "statically linked") {
		t.Errorf("loki-init is not static: %s", out)
	}
	for _, bin := range []string{"loki-supervise", "loki-init", "loki-kube"} {
		out, err := exec.Command(filepath.Join(top, "bin", bin), "--version").Output()
		if err != nil || !strings.HasPrefix(string(out), bin+" ") {
			t.Errorf("%s --version: %v %q", bin, err, out)
		}
	}
	qs := exec.Command("./bin/loki-supervise", "session", "--", "/bin/sh", "-c", "echo hello from PID $$")
	qs.Dir = top
	qs.Stdin = nil
	out, err := qs.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "hello from PID ") {
		t.Fatalf("quick start from the tarball: %v\n%s", err, out)
	}
	// pod-spec runs in loki-kube, which loki-supervise finds beside itself.
	ps := exec.Command("./bin/loki-supervise", "pod-spec", "--image", "agent:1", "--loki-image", "loki:1", "--", "true")
	ps.Dir = top
	if out, err := ps.Output(); err != nil || !strings.Contains(string(out), `"kind": "Pod"`) {
		t.Errorf("pod-spec from the tarball: %v\n%s", err, out)
	}
	if man, err := exec.LookPath("man"); err == nil {
		page, err := exec.Command(man, "-l", filepath.Join(top, "share/man/man1/loki-supervise.1")).Output()
		if err != nil || !strings.Contains(string(page), "--isolation") {
			t.Errorf("man -l loki-supervise.1: %v (%d bytes)", err, len(page))
		}
	}
}
