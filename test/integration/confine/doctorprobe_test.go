//go:build linux

package confine

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
)

// doctorIn runs doctor --json in dir (as nobody when asked) and returns
// its exit code and report.
func doctorIn(t *testing.T, dir string, asNobody bool) (int, doctorReport) {
	t.Helper()
	sup := testutil.Binary(t, "loki-supervise")
	cmd := exec.Command(sup, "doctor", "--json")
	if asNobody {
		sup = testutil.AsNobody(t).Supervise
		cmd = exec.Command(sup, "doctor", "--json")
		cmd.SysProcAttr = testutil.AsUser(testutil.Nobody)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/"}
	}
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	var r doctorReport
	if jerr := json.Unmarshal(out, &r); jerr != nil {
		t.Fatalf("doctor --json: %v, stderr %q:\n%s", jerr, errb.String(), out)
	}
	return testutil.ExitCode(err), r
}

// TestDoctorRunsTheSession: doctor's "ok" is a session it started, from
// the user's cwd: as root from a project under another user's 0700 dir
// (which the default session refuses: its root has no capabilities),
// doctor fails and names the dir, and from one under root's own 0700
// dir (shown to the peer read-only) it passes; as nobody, crun and runc
// are ok exactly when an oci session through them runs. Before, doctor said the default session could run
// there (exit 0), and as nobody reported both runtimes ok while every
// oci session failed at start.
func TestDoctorRunsTheSession(t *testing.T) {
	testutil.RequireRoot(t)
	t.Run("root-unsearchable-cwd", func(t *testing.T) {
		top := hostDir(t, 0)
		if err := os.Chmod(top, 0o700); err != nil {
			t.Fatal(err)
		}
		// Root's own 0700 dir is shown to the peer; another user's is not.
		alices := ownedDir(t, filepath.Join(top, "alice"), testutil.Nobody, 0o700)
		proj := ownedDir(t, filepath.Join(alices, "proj"), 0, 0o755)
		code, r := doctorIn(t, proj, false)
		if code != 1 || r.DefaultSession || r.ok(t, "default session here") {
			t.Errorf("exit %d, default_session %v: want 1 and false from %s", code, r.DefaultSession, proj)
		}
		code, r = doctorIn(t, ownedDir(t, filepath.Join(top, "proj"), 0, 0o755), false)
		if code != 0 || !r.ok(t, "default session here") {
			t.Errorf("from root's 0700 dir: exit %d, want 0 and the session ok", code)
		}
		code, r = doctorIn(t, "/", false)
		if code != 0 || !r.ok(t, "default session here") {
			t.Errorf("from /: exit %d, want 0 and the session ok", code)
		}
	})
	t.Run("nobody-oci", func(t *testing.T) {
		testutil.RequireUserNamespaces(t)
		_, r := doctorIn(t, "/", true)
		for _, rt := range []string{"crun", "runc"} {
			if _, err := exec.LookPath(rt); err != nil {
				continue
			}
			u := testutil.AsNobody(t)
			sup, init, ctl := u.Supervise, u.Init, u.ControlRoot
			cmd := exec.Command(sup, "session", "--init", init, "--control-root", ctl, "--isolation", "oci", "--runtime", rt, "--rootfs", rootfs(t), "--", "/bin/true")
			cmd.SysProcAttr = testutil.AsUser(testutil.Nobody)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/"}
			cmd.Dir = "/"
			out, err := cmd.CombinedOutput()
			if got := r.ok(t, rt); got != (err == nil) {
				t.Errorf("doctor says %s ok=%v as nobody; a session through it: %v %s", rt, got, err, out)
			}
		}
	})
}
