//go:build linux

package confine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/testutil"
)

type doctorReport struct {
	UID            int    `json:"uid"`
	DefaultSession bool   `json:"default_session"`
	CgroupVersion  string `json:"cgroup_version"`
	LandlockABI    int    `json:"landlock_abi"`
	Checks         []struct {
		Name   string `json:"name"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
		Fix    string `json:"fix"`
	} `json:"checks"`
}

func (r doctorReport) ok(t *testing.T, name string) bool {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			if !c.OK && c.Fix == "" {
				t.Errorf("%s unavailable without a fix: %+v", name, c)
			}
			return c.OK
		}
	}
	t.Fatalf("no check %q in %+v", name, r.Checks)
	return false
}

func doctor(t *testing.T, asNobody bool, args ...string) (int, []byte) {
	t.Helper()
	cmd := exec.Command(testutil.Binary(t, "loki-supervise"), append([]string{"doctor"}, args...)...)
	if asNobody {
		sup := testutil.AsNobody(t).Supervise
		cmd = exec.Command(sup, append([]string{"doctor"}, args...)...)
		cmd.SysProcAttr = testutil.AsUser(testutil.Nobody)
	}
	cmd.Dir = "/"
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if errb.Len() > 0 {
		t.Errorf("stderr %q", errb.String())
	}
	return testutil.ExitCode(err), out
}

// cgroupVersion reads /proc/self/mountinfo the plain way: cgroup (v1)
// mounts, a cgroup2 mount, or both.
func cgroupVersion(t *testing.T) string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v1, v2 := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		_, post, _ := strings.Cut(sc.Text(), " - ")
		switch strings.Fields(post + " x")[0] {
		case "cgroup":
			v1 = true
		case "cgroup2":
			v2 = true
		}
	}
	switch {
	case v1 && v2:
		return "hybrid"
	case v1:
		return "v1"
	case v2:
		return "v2"
	}
	return "none"
}

// TestDoctor: the JSON report matches what the test finds on its own
// (cgroup version from mountinfo, Landlock ABI from the kernel, a network
// namespace from unshare, runtimes on PATH, a pids cgroup mkdir), the
// text report has a line per check and a fix under each missing item,
// and the exit code says the default session can run.
func TestDoctor(t *testing.T) {
	testutil.RequireRoot(t)
	code, out := doctor(t, false, "--json")
	var r doctorReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, out)
	}
	if code != 0 || !r.DefaultSession {
		t.Errorf("exit %d, default_session %v as root: want 0, true", code, r.DefaultSession)
	}
	if want := cgroupVersion(t); r.CgroupVersion != want {
		t.Errorf("cgroup_version %q, mountinfo says %q", r.CgroupVersion, want)
	}
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		abi = 0
	}
	if r.LandlockABI != int(abi) || r.ok(t, "landlock") != (abi > 0) {
		t.Errorf("landlock_abi %d, the kernel says %d", r.LandlockABI, abi)
	}
	netErr := exec.Command("unshare", "--net", "true").Run()
	if r.ok(t, "network namespaces") != (netErr == nil) {
		t.Errorf("network namespaces ok=%v, unshare --net: %v", !r.ok(t, "network namespaces"), netErr)
	}
	for _, rt := range []string{"crun", "runc"} {
		_, err := exec.LookPath(rt)
		if r.ok(t, rt) != (err == nil) {
			t.Errorf("%s ok=%v, LookPath: %v", rt, r.ok(t, rt), err)
		}
	}
	if _, err := os.Stat("/sys/fs/cgroup/pids/cgroup.procs"); err == nil {
		dir := "/sys/fs/cgroup/pids/loki-doctor-test"
		mkErr := os.Mkdir(dir, 0o755)
		if mkErr == nil {
			unix.Rmdir(dir)
		}
		if r.ok(t, "cgroup pids") != (mkErr == nil) {
			t.Errorf("cgroup pids ok=%v, mkdir: %v", r.ok(t, "cgroup pids"), mkErr)
		}
	}
	// loki-kube is beside the tested loki-supervise (make build), and
	// missing beside a lone copy of it: optional either way.
	if !r.ok(t, "loki-kube") {
		t.Errorf("loki-kube reported missing beside %s", testutil.Binary(t, "loki-supervise"))
	}
	lone := testutil.CopyExecutable(t, testutil.Binary(t, "loki-supervise"), t.TempDir())
	loneOut, _ := exec.Command(lone, "doctor", "--json").Output()
	var lr doctorReport
	if err := json.Unmarshal(loneOut, &lr); err != nil {
		t.Fatalf("--json output of a lone loki-supervise does not parse: %v\n%s", err, loneOut)
	}
	if lr.ok(t, "loki-kube") {
		t.Errorf("loki-kube reported present beside a lone copy %s", lone)
	}
	_, text := doctor(t, false)
	lines := strings.Split(strings.TrimSpace(string(text)), "\n")
	for _, c := range r.Checks {
		found := false
		for i, l := range lines {
			// A check's line is its status word, then its name: other
			// lines (the backends' summaries) may name it too.
			status, rest, _ := strings.Cut(l, " ")
			if status != "" && strings.HasPrefix(strings.TrimLeft(rest, " "), c.Name+"  ") {
				found = true
				if !c.OK && (i+1 >= len(lines) || !strings.Contains(lines[i+1], "fix: ")) {
					t.Errorf("text: no fix under %q", l)
				}
			}
		}
		if !found {
			t.Errorf("text report has no line for %q:\n%s", c.Name, text)
		}
	}
}

// TestDoctorUnprivileged: as nobody the default session still runs (user
// namespaces), and a cgroup nobody cannot write is reported with its fix.
func TestDoctorUnprivileged(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireUserNamespaces(t)
	code, out := doctor(t, true, "--json")
	var r doctorReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, out)
	}
	if code != 0 || !r.DefaultSession || r.UID != testutil.Nobody || !r.ok(t, "pid+mount+user namespaces") {
		t.Errorf("exit %d, report %+v: want 0 and the default session possible", code, r)
	}
	if !writableCgroup(t) && r.ok(t, "cgroup pids") {
		t.Errorf("cgroup pids reported usable by nobody, who cannot write /sys/fs/cgroup/pids")
	}
}
