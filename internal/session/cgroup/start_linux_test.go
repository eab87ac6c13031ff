package cgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/isolation/namespace/stage"
	"github.com/loki-sh/loki/internal/testutil"
)

// TestStartBornInCgroup: the process Start makes reads its own cgroup
// as the session's in every hierarchy of its limits (nothing moves it
// afterwards), and no thread of this process is left there.
func TestStartBornInCgroup(t *testing.T) {
	testutil.RequireRoot(t)
	host, err := Detect()
	if err != nil || host.Version() == "none" {
		t.Skipf("no cgroups: %v", err)
	}
	name := "loki-session-starttest" + strconv.Itoa(os.Getpid())
	c, err := host.Create(name, confine.Resources{PidsMax: 64, MemoryMax: 256 << 20, CPU: &confine.CPUMax{Quota: 100000, Period: 100000}})
	if err != nil {
		t.Skipf("cannot make a cgroup here: %v", err)
	}
	defer c.Remove()
	for i := 0; i < 20; i++ {
		out := startCat(t, c)
		n, v1 := c.Placement()
		if err := holds(out, n, v1); err != nil {
			t.Fatalf("round %d: %v\n%s", i, err, out)
		}
	}
	checkThreadsHome(t, name)
}

// TestStartV2CloneIntoCgroup proves the v2 path (CLONE_INTO_CGROUP) on
// the cgroup2 hierarchy, the unified one of a hybrid host too (which
// has no controllers, so no limits, but places processes alike).
func TestStartV2CloneIntoCgroup(t *testing.T) {
	testutil.RequireRoot(t)
	host, err := Detect()
	if err != nil || host.UnifiedMount == "" {
		t.Skipf("no cgroup2 mount: %v", err)
	}
	name := "loki-session-v2test" + strconv.Itoa(os.Getpid())
	parent := host.UnifiedMount
	if host.Unified != "" && strings.HasPrefix(host.Unified, host.UnifiedMount+"/") {
		parent = filepath.Dir(host.Unified)
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a cgroup2 dir here: %v", err)
	}
	c := &Cgroup{v2: true, name: name, mount: host.UnifiedMount, dirs: map[string]string{"pids": dir}}
	defer c.Remove()
	out := startCat(t, c)
	if err := holds(out, name, nil); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

func startCat(t *testing.T, c *Cgroup) string {
	t.Helper()
	cmd := exec.Command("cat", "/proc/self/cgroup")
	var out strings.Builder
	cmd.Stdout = &out
	if err := c.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// holds is the stage's own check.
func holds(self, name string, v1 []string) error {
	return stage.Cgroup{Name: name, V1: v1}.Holds(self)
}

func checkThreadsHome(t *testing.T, name string) {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/cgroup")
		if err == nil && strings.Contains(string(b), name) {
			t.Errorf("thread %s left in the session's cgroup:\n%s", task.Name(), b)
		}
	}
}

// TestRemoveKillsWhatIsLeft: on the real kernel, a cgroup that still
// holds a process is not removed by the first rmdir (refused), but
// emptied, its process killed, and then removed, peer child included.
func TestRemoveKillsWhatIsLeft(t *testing.T) {
	testutil.RequireRoot(t)
	host, err := Detect()
	if err != nil || host.Version() == "none" {
		t.Skipf("no cgroups: %v", err)
	}
	name := "loki-session-removetest" + strconv.Itoa(os.Getpid())
	c, err := host.Create(name, confine.Resources{PidsMax: 64})
	if err != nil {
		t.Skipf("cannot make a cgroup here: %v", err)
	}
	defer c.Remove()
	if f, err := c.OpenPeerTasks(); err != nil {
		t.Fatal(err)
	} else if f != nil {
		f.Close()
	}
	cmd := exec.Command("sleep", "60")
	if err := c.Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err == nil || cmd.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the member: %v, want killed by SIGKILL", err)
	}
	for _, d := range append(c.Dirs(), c.peer) {
		if _, err := os.Stat(d); d != "" && !os.IsNotExist(err) {
			t.Errorf("%s left: %v", d, err)
		}
	}
}
