//go:build linux

package confine

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
	"github.com/loki-sh/loki/internal/testutil/backends"
)

const generous = 90 * time.Second

// backend is one row of the shared table (testutil/backends).
type backend = backends.Backend

// rows are the backends most tests here run. Not docker: the
// filesystem, network and user tests read the host's files, which its
// image does not have; not none, which confines nothing (its refusals
// are tests of their own).
func rows() []backend {
	return backends.Of("namespace", "namespace-userns", "oci-crun", "oci-runc")
}

// namespaceRows are the namespace backend as root (a private user
// namespace) and as nobody (its own uid mapped).
func namespaceRows() []backend { return backends.Of("namespace", "namespace-userns") }

// peerUID owns what b's peer makes and is given on the host.
func peerUID(b backend) int {
	if b.Unprivileged {
		return testutil.Nobody
	}
	return 0
}

// session runs loki-supervise session with b's flags, flags and the peer
// argv, and returns its exit code, stdout and stderr.
func session(t *testing.T, b backend, flags []string, peer ...string) (int, string, string) {
	t.Helper()
	return sessionEnv(t, b, nil, flags, peer...)
}

// sessionEnv is session with env added to the supervisor's environment
// (a HOME of the test's); a NAME without "=" removes that variable.
func sessionEnv(t *testing.T, b backend, env []string, flags []string, peer ...string) (int, string, string) {
	t.Helper()
	bflags := b.Flags(t, backends.Busybox)
	sup, init := testutil.Binary(t, "loki-supervise"), testutil.Binary(t, "loki-init")
	var ctlRoot string
	var attr *syscall.SysProcAttr
	if b.Unprivileged {
		u := testutil.AsNobody(t)
		sup, init, ctlRoot = u.Supervise, u.Init, u.ControlRoot
		attr = testutil.AsUser(testutil.Nobody)
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
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	for _, e := range env {
		if !strings.Contains(e, "=") {
			cmd.Env = slices.DeleteFunc(cmd.Env, func(v string) bool { return strings.HasPrefix(v, e+"=") })
			continue
		}
		cmd.Env = append(cmd.Env, e)
	}
	cmd.Dir = "/"
	cmd.SysProcAttr = attr
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code := testutil.WaitExit(t, cmd, generous)
	return code, out.String(), errb.String()
}

// rootfs is the shared busybox root filesystem (testutil.BusyboxRootfs).
func rootfs(t *testing.T) string { return testutil.BusyboxRootfs(t) }

func TestMain(m *testing.M) {
	if os.Getenv(noMountSetattrEnv) != "" {
		execWithoutMountSetattr()
	}
	testutil.Main(m)
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

// wantResults checks the NAME=VALUE lines of out against want.
func wantResults(t *testing.T, out string, want map[string]string) {
	t.Helper()
	r := results(out)
	for k, v := range want {
		if r[k] != v {
			t.Errorf("%s=%q, want %q (output %q)", k, r[k], v, out)
		}
	}
}
