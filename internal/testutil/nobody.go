package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Nobody is the unprivileged user the tests run supervisors and peers as.
const Nobody = 65534

// AsUser runs a command as uid, with the same gid and no supplementary
// groups (the caller must be root).
func AsUser(uid int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
}

var usernsOK = sync.OnceValue(func() string {
	probe := exec.Command("unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "true")
	probe.SysProcAttr = AsUser(Nobody)
	if out, err := probe.CombinedOutput(); err != nil {
		return "no unprivileged user namespaces: " + strings.TrimSpace(string(out))
	}
	return ""
})

// RequireUserNamespaces skips (or fails under CI) unless Nobody can make a
// user namespace with a PID namespace and a fresh /proc in it: what an
// unprivileged supervisor's namespace backend needs. The caller must be
// root (to become Nobody).
func RequireUserNamespaces(t testing.TB) {
	t.Helper()
	RequireRoot(t)
	if reason := usernsOK(); reason != "" {
		skipOrFail(t, reason)
	}
}

// Unprivileged is where a supervisor run as Nobody finds its binaries and
// its control root, all reachable by Nobody: the test's build dir and
// temp dirs are not.
type Unprivileged struct {
	Top         string // 0755, holding bin/ and ctl/
	Supervise   string // bin/loki-supervise
	Init        string // bin/loki-init
	ControlRoot string // ctl/, 0700, owned by Nobody
}

var (
	unprivMu sync.Mutex
	unpriv   = map[testing.TB]Unprivileged{}
)

// AsNobody makes (once per test) the copies and the control root a
// supervisor run as Nobody uses (root makes them; the namespace backend
// also needs RequireUserNamespaces). Never chmods above the test's own
// temp dir: its parent is the host's /tmp.
func AsNobody(t testing.TB) Unprivileged {
	t.Helper()
	RequireRoot(t)
	unprivMu.Lock()
	defer unprivMu.Unlock()
	if u, ok := unpriv[t]; ok {
		return u
	}
	top := t.TempDir()
	for _, d := range []string{filepath.Dir(top), top} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(top, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	u := Unprivileged{Top: top,
		Supervise:   CopyExecutable(t, Binary(t, "loki-supervise"), bin),
		Init:        CopyExecutable(t, Binary(t, "loki-init"), bin),
		ControlRoot: filepath.Join(top, "ctl")}
	if err := os.Mkdir(u.ControlRoot, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(u.ControlRoot, Nobody, Nobody); err != nil {
		t.Fatal(err)
	}
	unpriv[t] = u
	t.Cleanup(func() {
		unprivMu.Lock()
		delete(unpriv, t)
		unprivMu.Unlock()
	})
	return u
}

// CopyExecutable copies the binary src into dir, executable by every
// user, and returns the copy's path.
func CopyExecutable(t testing.TB, src, dir string) string {
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
