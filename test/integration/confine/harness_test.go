//go:build linux

package confine

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
)

const generous = 90 * time.Second

// nobody is the unprivileged user of the tests.
const nobody = 65534

// backend is one way of running a session under test.
type backend struct {
	name string
	// root is false for the namespace backend run by an unprivileged
	// supervisor (its user-namespace path).
	root  bool
	setup func(t *testing.T) []string // flags selecting it; skips if unavailable
}

func backends() []backend {
	return []backend{
		{name: "namespace", root: true, setup: func(t *testing.T) []string {
			testutil.RequireRoot(t)
			testutil.RequirePIDNamespace(t)
			return []string{"--isolation", "namespace"}
		}},
		{name: "namespace-userns", setup: func(t *testing.T) []string {
			testutil.RequireRoot(t) // to become nobody
			requireUserNamespaces(t)
			return []string{"--isolation", "namespace"}
		}},
		ociBackend("crun"), ociBackend("runc"),
	}
}

// dockerBackend runs the busybox test image on the host's engine (not in
// backends(): the filesystem, network and user tests there read the
// host's files, which a container does not have).
func dockerBackend() backend {
	return backend{name: "docker", root: true, setup: func(t *testing.T) []string {
		testutil.RequireDocker(t)
		return []string{"--isolation", "docker", "--image", testutil.DockerImage(t, "loki-test:busybox")}
	}}
}

func ociBackend(runtime string) backend {
	return backend{name: "oci-" + runtime, root: true, setup: func(t *testing.T) []string {
		testutil.RequireRoot(t)
		testutil.RequireCommand(t, runtime)
		return []string{"--isolation", "oci", "--runtime", runtime, "--rootfs", rootfs(t)}
	}}
}

func requireUserNamespaces(t *testing.T) {
	t.Helper()
	probe := exec.Command("unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "true")
	probe.SysProcAttr = asUser(nobody)
	if out, err := probe.CombinedOutput(); err != nil {
		reason := "no unprivileged user namespaces: " + strings.TrimSpace(string(out))
		if testutil.InCI() {
			t.Fatal(reason)
		}
		t.Skip(reason)
	}
}

func asUser(uid int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
}

// session runs loki-supervise session with b's flags, flags and the peer
// argv, and returns its exit code, stdout and stderr.
func session(t *testing.T, b backend, flags []string, peer ...string) (int, string, string) {
	t.Helper()
	return sessionEnv(t, b, nil, flags, peer...)
}

// sessionEnv is session with env added to the supervisor's environment
// (a HOME of the test's).
func sessionEnv(t *testing.T, b backend, env []string, flags []string, peer ...string) (int, string, string) {
	t.Helper()
	bflags := b.setup(t)
	sup, init := testutil.Binary(t, "loki-supervise"), testutil.Binary(t, "loki-init")
	var ctlRoot string
	var attr *syscall.SysProcAttr
	if !b.root {
		sup, init, ctlRoot = unprivilegedCopies(t)
		attr = asUser(nobody)
	} else {
		ctlRoot = t.TempDir()
		// A --user init reaches its control dir through the test's own
		// temp dir (0700 when made). Never chmod above it: its parent is
		// the host's /tmp.
		if err := os.Chmod(filepath.Dir(ctlRoot), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string{"session", "--init", init, "--control-root", ctlRoot, "--wait-after-eof"}, bflags...)
	args = append(append(append(args, flags...), "--"), peer...)
	cmd := exec.Command(sup, args...)
	cmd.Env = append(append(os.Environ(), "LC_ALL=C"), env...)
	cmd.Dir = "/"
	cmd.SysProcAttr = attr
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	case <-time.After(generous):
		cmd.Process.Kill() // our own child, still unreaped
		<-done
		t.Fatalf("loki-supervise did not finish within %v", generous)
		return -1, "", ""
	}
}

var (
	copiesMu sync.Mutex
	copies   = map[*testing.T][3]string{}
)

// unprivilegedCopies puts the binaries where nobody can run them and a
// control root nobody owns.
func unprivilegedCopies(t *testing.T) (sup, init, ctlRoot string) {
	t.Helper()
	copiesMu.Lock()
	defer copiesMu.Unlock()
	if c, ok := copies[t]; ok {
		return c[0], c[1], c[2]
	}
	top := t.TempDir()
	for _, d := range []string{filepath.Dir(top), top} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sup = copyExecutable(t, testutil.Binary(t, "loki-supervise"), top)
	init = copyExecutable(t, testutil.Binary(t, "loki-init"), top)
	ctlRoot = filepath.Join(top, "ctl")
	if err := os.Mkdir(ctlRoot, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(ctlRoot, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	copies[t] = [3]string{sup, init, ctlRoot}
	return sup, init, ctlRoot
}

func copyExecutable(t *testing.T, src, dir string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// rootfs is the shared busybox root filesystem (testutil.BusyboxRootfs).
func rootfs(t *testing.T) string { return testutil.BusyboxRootfs(t) }

func TestMain(m *testing.M) {
	hostDirs := testutil.GuardHostDirs()
	code := m.Run()
	testutil.RemoveBusyboxRootfs()
	if err := hostDirs(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// results parses the peer's "key=value" lines.
func results(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m
}
