package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/session/confine"
)

// This machine's own layout (hybrid: v1 controllers, cgroup2 without them)
// and a unified one.
const (
	hybridMountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	hybridSelf  = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n1:cpu,cpuacct:/x\n0::/\n"
	v2Mountinfo = `26 1 0:23 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate
`
	v2Self = "0::/user.slice/user-1000.slice/session-3.scope\n"
	// A container's cgroup namespace: the mount's root is its cgroup.
	nsMountinfo = `26 1 0:23 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw
`
	nsSelf = "0::/docker/abc\n"
)

func TestParseHost(t *testing.T) {
	h := parseHost([]byte(hybridMountinfo), []byte(hybridSelf))
	if h.Version() != "hybrid" || !h.UsesV1() {
		t.Errorf("hybrid: version %s uses v1 %v", h.Version(), h.UsesV1())
	}
	want := map[string]string{"pids": "/sys/fs/cgroup/pids", "memory": "/sys/fs/cgroup/memory/process_api/abc",
		"cpu": "/sys/fs/cgroup/cpu,cpuacct/x", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct/x", "name=systemd": "/sys/fs/cgroup/systemd"}
	for c, d := range want {
		if h.V1[c] != d {
			t.Errorf("hybrid %s: %q, want %q", c, h.V1[c], d)
		}
	}
	if h.UnifiedMount != "/sys/fs/cgroup/unified" {
		t.Errorf("hybrid unified %q", h.UnifiedMount)
	}
	h = parseHost([]byte(v2Mountinfo), []byte(v2Self))
	if h.Version() != "v2" || h.UsesV1() || h.Unified != "/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope" {
		t.Errorf("v2: %+v", h)
	}
	h = parseHost([]byte(nsMountinfo), []byte(nsSelf))
	if h.Unified != "/sys/fs/cgroup" {
		t.Errorf("cgroupns: %+v", h)
	}
	if h := parseHost(nil, nil); h.Version() != "none" {
		t.Errorf("empty: %s", h.Version())
	}
}

// fakeFS makes a fake cgroupfs dir tree: each dir gets the named files.
func fakeFS(t *testing.T, files map[string]string) string {
	root := t.TempDir()
	for p, v := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// populate stands in for the kernel, which fills a new cgroup dir with
// its control files.
func populate(t *testing.T, dir string, names ...string) {
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func read(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// kernelRmdir removes a fake cgroup dir as the kernel does, never one
// with a child cgroup or a process in it (EBUSY), and appends what it
// removed to removed (nil: not kept).
func kernelRmdir(removed *[]string) func(string) error {
	return func(p string) error {
		entries, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.IsDir() {
				return unix.EBUSY
			}
		}
		if b, _ := os.ReadFile(filepath.Join(p, "cgroup.procs")); len(strings.TrimSpace(string(b))) > 0 {
			return unix.EBUSY
		}
		if removed != nil {
			*removed = append(*removed, p)
		}
		return os.RemoveAll(p)
	}
}

func TestCreateV2(t *testing.T) {
	root := fakeFS(t, map[string]string{
		"cgroup.controllers":           "cpuset cpu io memory pids",
		"cgroup.subtree_control":       "memory",
		"svc/me.scope/cgroup.procs":    "1\n",
		"svc/cgroup.controllers":       "cpu memory pids",
		"svc/cgroup.subtree_control":   "memory pids",
		"other/cgroup.controllers":     "memory",
		"other/cgroup.subtree_control": "",
	})
	rmdir = kernelRmdir(nil)
	defer func() { rmdir = unix.Rmdir }()
	h := Host{UnifiedMount: root, Unified: filepath.Join(root, "svc/me.scope")}
	res := confine.Resources{PidsMax: 64, MemoryMax: 32 << 20, CPU: &confine.CPUMax{Quota: 50000, Period: 100000}}
	dir := filepath.Join(root, "svc", "loki-session-1")
	// A name already taken is refused (never joined).
	os.Mkdir(dir, 0o755)
	if _, err := h.Create("loki-session-1", res); err == nil || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Create over an existing cgroup: %v, want ErrUnavailable", err)
	}
	os.RemoveAll(dir)
	mkdirHook = func(p string) {
		populate(t, p, "pids.max", "memory.max", "memory.swap.max", "cpu.max", "cgroup.procs", "memory.events", "pids.events")
	}
	defer func() { mkdirHook = nil }()
	c, err := h.Create("loki-session-1", res)
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{"pids.max": "64", "memory.max": "33554432", "memory.swap.max": "0", "cpu.max": "50000 100000"} {
		if got := read(t, filepath.Join(dir, f)); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	if got := read(t, filepath.Join(root, "svc/cgroup.subtree_control")); got != "+cpu" {
		t.Errorf("parent subtree_control = %q, want +cpu written", got)
	}
	if err := c.Add(4242); err != nil || read(t, filepath.Join(dir, "cgroup.procs")) != "4242" {
		t.Errorf("Add: %v", err)
	}
	if c.Hit() != nil {
		t.Errorf("Hit with no events: %v", c.Hit())
	}
	os.WriteFile(filepath.Join(dir, "memory.events"), []byte("low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "pids.events"), []byte("max 3\n"), 0o644)
	err = c.Hit()
	if !errors.Is(err, confine.ErrMemoryLimit) || !errors.Is(err, confine.ErrPidsLimit) ||
		!strings.Contains(err.Error(), "--memory-max 32M") || !strings.Contains(err.Error(), "refused 3 forks") {
		t.Errorf("Hit = %v", err)
	}
	// A container runtime nests its cgroup here (the path from the
	// hierarchy's root); on v2 its init is never adopted out of it.
	if path, ok := c.UnifiedPath(); !ok || path != "/svc/loki-session-1" {
		t.Errorf("UnifiedPath = %q, %v", path, ok)
	}
	if err := c.Adopt(4242, "loki-0123456789abcdef"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Adopt on v2: %v, want ErrUnavailable", err)
	}
	// The runtime's leaf, left behind (its runtime was killed), goes
	// first: the kernel refuses to remove a cgroup with children.
	leaf := filepath.Join(dir, "loki-0123456789abcdef")
	os.Mkdir(leaf, 0o755)
	populate(t, leaf, "cgroup.procs")
	var order []string
	rmdir = kernelRmdir(&order)
	os.WriteFile(filepath.Join(dir, "cgroup.procs"), nil, 0o644)
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("not removed: %v", err)
	}
	if len(order) != 2 || order[0] != leaf || order[1] != dir {
		t.Errorf("removed %v, want the nested leaf, then the session's cgroup", order)
	}
	// A controller the parent does not have is refused, not skipped.
	h.Unified = filepath.Join(root, "other/me")
	if _, err := h.Create("loki-session-2", res); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "not delegated") {
		t.Errorf("missing controller: %v", err)
	}
}

func TestCreateV1(t *testing.T) {
	root := fakeFS(t, map[string]string{"pids/x": "", "memory/me/x": "", "cpu/x": ""})
	rmdir = kernelRmdir(nil)
	mkdirHook = func(p string) {
		populate(t, p, "pids.max", "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "cpu.cfs_period_us", "cpu.cfs_quota_us", "cgroup.procs", "memory.oom_control", "pids.events")
	}
	defer func() { rmdir, mkdirHook = unix.Rmdir, nil }()
	h := Host{V1: map[string]string{"pids": root + "/pids", "memory": root + "/memory/me", "cpu": root + "/cpu"}}
	c, err := h.Create("loki-session-1", confine.Resources{MemoryMax: 64 << 20, CPU: &confine.CPUMax{Quota: 20000, Period: 50000}})
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{
		"pids/loki-session-1/pids.max": "4096", "memory/me/loki-session-1/memory.limit_in_bytes": "67108864",
		"memory/me/loki-session-1/memory.memsw.limit_in_bytes": "67108864",
		"cpu/loki-session-1/cpu.cfs_quota_us":                  "20000", "cpu/loki-session-1/cpu.cfs_period_us": "50000",
	} {
		if got := read(t, filepath.Join(root, f)); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	if len(c.Dirs()) != 3 {
		t.Errorf("dirs %v", c.Dirs())
	}
	// v1 adopts the runtime's init: nothing to nest in.
	if path, ok := c.UnifiedPath(); ok {
		t.Errorf("UnifiedPath on v1 = %q", path)
	}
	os.WriteFile(filepath.Join(root, "memory/me/loki-session-1/memory.oom_control"), []byte("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"), 0o644)
	if err := c.Hit(); !errors.Is(err, confine.ErrMemoryLimit) || !strings.Contains(err.Error(), "killed 2 processes") {
		t.Errorf("Hit = %v", err)
	}
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	// A missing controller is refused with the fix.
	delete(h.V1, "cpu")
	if _, err := h.Create("loki-session-2", confine.Resources{CPU: &confine.CPUMax{Quota: 1000, Period: 1000}}); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no cgroup v1 cpu") {
		t.Errorf("missing cpu: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "pids/loki-session-2")); !os.IsNotExist(err) {
		t.Errorf("a refused Create left its pids dir: %v", err)
	}
}

// TestOpenPeerTasksV1: the pids limit moves to the child "peer" (the
// parent, where the init stays, is unlimited), refused forks are read
// there, and Remove takes the child first.
func TestOpenPeerTasksV1(t *testing.T) {
	root := fakeFS(t, map[string]string{"pids/x": ""})
	var removed []string
	rmdir = kernelRmdir(&removed)
	mkdirHook = func(p string) { populate(t, p, "pids.max", "cgroup.procs", "pids.events", "tasks") }
	defer func() { rmdir, mkdirHook = unix.Rmdir, nil }()
	h := Host{V1: map[string]string{"pids": root + "/pids"}}
	c, err := h.Create("loki-session-1", confine.Resources{PidsMax: 30})
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.OpenPeerTasks()
	if err != nil || f == nil {
		t.Fatalf("OpenPeerTasks = %v, %v", f, err)
	}
	f.Close()
	s := filepath.Join(root, "pids/loki-session-1")
	if got, peer := read(t, s+"/pids.max"), read(t, s+"/peer/pids.max"); got != "max" || peer != "30" {
		t.Errorf("pids.max: session %q, peer %q: want max and 30", got, peer)
	}
	os.WriteFile(s+"/peer/pids.events", []byte("max 3\n"), 0o644)
	if err := c.Hit(); !errors.Is(err, confine.ErrPidsLimit) || !strings.Contains(err.Error(), "refused 3 forks") {
		t.Errorf("Hit = %v", err)
	}
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 || removed[0] != s+"/peer" || removed[1] != s {
		t.Errorf("removed %v: want the peer child, then the session", removed)
	}
	// v2 and a cgroup without a pids limit: nothing to split.
	if f, err := (&Cgroup{v2: true, dirs: map[string]string{"pids": s}}).OpenPeerTasks(); f != nil || err != nil {
		t.Errorf("v2: %v, %v", f, err)
	}
	if f, err := (*Cgroup)(nil).OpenPeerTasks(); f != nil || err != nil {
		t.Errorf("nil: %v, %v", f, err)
	}
}
