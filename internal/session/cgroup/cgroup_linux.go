//go:build linux

package cgroup

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/session/confine"
)

// recordFile, in a session's dir beside its owner record (in its scratch
// dir before), lists its cgroup dirs.
const recordFile = "cgroups"

// removeWait bounds how long Remove waits for killed members to leave.
const removeWait = 5 * time.Second

// rmdir removes a cgroup dir, mkdirHook runs after one is made: a test
// with a fake cgroupfs replaces them (the kernel fills a new dir with its
// files and lets rmdir remove it with them).
var (
	rmdir     = unix.Rmdir
	mkdirHook func(string)
)

func mkdir(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if mkdirHook != nil {
		mkdirHook(dir)
	}
	return nil
}

// Detect reads this process's cgroups.
func Detect() (Host, error) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return Host{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return Host{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return parseHost(mi, self), nil
}

// Cgroup is one session's cgroup: one dir per v1 controller, or one v2
// dir.
type Cgroup struct {
	v2   bool
	name string
	// mount is the cgroup2 mount point (v2 only): Path is relative to it.
	mount string
	dirs  map[string]string // controller -> dir; v2: every controller -> the one dir
	res   confine.Resources
	// peer (v1) is the pids child that holds the pids limit once
	// OpenPeerTasks split it off: the peer is born there, the init stays
	// in the parent, outside the count.
	peer string
}

// Create makes the cgroup name with the limits of r (the default pids
// limit included) written, and nothing in it yet: in the hierarchies of
// the controllers those limits need only.
func (h Host) Create(name string, r confine.Resources) (*Cgroup, error) {
	if name == "" || strings.ContainsAny(name, "/\n") || name == "." || name == ".." {
		return nil, fmt.Errorf("%w: bad cgroup name %q", ErrUnavailable, name)
	}
	var need []string
	if r.Pids() > 0 {
		need = append(need, "pids")
	}
	if r.MemoryMax > 0 {
		need = append(need, "memory")
	}
	if r.CPU != nil {
		need = append(need, "cpu")
	}
	c := &Cgroup{name: name, dirs: map[string]string{}, res: r}
	var err error
	if h.UsesV1() {
		err = c.createV1(h, need)
	} else if h.UnifiedMount != "" {
		c.v2, c.mount = true, h.UnifiedMount
		err = c.createV2(h, need)
	} else {
		err = fmt.Errorf("%w: no cgroup filesystem is mounted; mount cgroup2 on /sys/fs/cgroup", ErrUnavailable)
	}
	if err != nil {
		c.rmdirs()
		return nil, err
	}
	return c, nil
}

func (c *Cgroup) createV1(h Host, need []string) error {
	for _, ctrl := range need {
		parent, ok := h.V1[ctrl]
		if !ok {
			return fmt.Errorf("%w: this host has no cgroup v1 %s controller mounted (mount -t cgroup -o %s cgroup /sys/fs/cgroup/%s)", ErrUnavailable, ctrl, ctrl, ctrl)
		}
		dir := filepath.Join(parent, c.name)
		if err := mkdir(dir); err != nil {
			return err
		}
		c.dirs[ctrl] = dir
	}
	r := c.res
	var writes []struct{ ctrl, file, val string }
	if r.Pids() > 0 {
		writes = append(writes, struct{ ctrl, file, val string }{"pids", "pids.max", strconv.FormatInt(r.Pids(), 10)})
	}
	if r.MemoryMax > 0 {
		mem := strconv.FormatInt(r.MemoryMax, 10)
		writes = append(writes, struct{ ctrl, file, val string }{"memory", "memory.limit_in_bytes", mem})
		if _, err := os.Stat(filepath.Join(c.dirs["memory"], "memory.memsw.limit_in_bytes")); err == nil {
			// Memory plus swap at the same limit: no swap.
			writes = append(writes, struct{ ctrl, file, val string }{"memory", "memory.memsw.limit_in_bytes", mem})
		}
	}
	if r.CPU != nil {
		writes = append(writes,
			struct{ ctrl, file, val string }{"cpu", "cpu.cfs_period_us", strconv.FormatUint(r.CPU.Period, 10)},
			struct{ ctrl, file, val string }{"cpu", "cpu.cfs_quota_us", strconv.FormatInt(r.CPU.Quota, 10)})
	}
	for _, w := range writes {
		if err := writeFile(filepath.Join(c.dirs[w.ctrl], w.file), w.val); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cgroup) createV2(h Host, need []string) error {
	// A sibling of the supervisor's cgroup (its parent, which delegates
	// controllers, holds no processes), or a child of the root.
	parent := filepath.Dir(h.Unified)
	if h.Unified == h.UnifiedMount || !strings.HasPrefix(h.Unified, h.UnifiedMount+"/") {
		parent = h.UnifiedMount
	}
	avail, err := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	enabled, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	for _, ctrl := range need {
		if !hasOpt(strings.Fields(string(avail)), ctrl) {
			return fmt.Errorf("%w: cgroup v2 controller %s is not delegated to %s (enable it in its parent's cgroup.subtree_control, or run loki-supervise under systemd-run -p Delegate=yes)", ErrUnavailable, ctrl, parent)
		}
		if !hasOpt(strings.Fields(string(enabled)), ctrl) {
			if err := writeFile(filepath.Join(parent, "cgroup.subtree_control"), "+"+ctrl); err != nil {
				return fmt.Errorf("%w (%s holds processes: run loki-supervise in a leaf cgroup, e.g. systemd-run --scope -p Delegate=yes)", err, parent)
			}
		}
	}
	dir := filepath.Join(parent, c.name)
	if err := mkdir(dir); err != nil {
		return err
	}
	for _, ctrl := range need {
		c.dirs[ctrl] = dir
	}
	r := c.res
	if r.Pids() > 0 {
		if err := writeFile(filepath.Join(dir, "pids.max"), strconv.FormatInt(r.Pids(), 10)); err != nil {
			return err
		}
	}
	if r.MemoryMax > 0 {
		if err := writeFile(filepath.Join(dir, "memory.max"), strconv.FormatInt(r.MemoryMax, 10)); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(dir, "memory.swap.max")); err == nil {
			if err := writeFile(filepath.Join(dir, "memory.swap.max"), "0"); err != nil {
				return err
			}
		}
	}
	if r.CPU != nil {
		if err := writeFile(filepath.Join(dir, "cpu.max"), r.CPU.String()); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes an existing control file: a missing one is a missing
// controller, never created.
func writeFile(path, val string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|unix.O_CLOEXEC, 0)
	if err == nil {
		_, err = f.WriteString(val)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("%w: write %s: %v", ErrUnavailable, path, err)
	}
	return nil
}

// Dirs are the cgroup's dirs, one per hierarchy, sorted.
func (c *Cgroup) Dirs() []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range c.dirs {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// Placement is where Start puts a process, as the process reads it in
// /proc/self/cgroup: the last element of its path in each hierarchy
// (the cgroup's name), and the controllers of the v1 hierarchies that
// hold it, sorted (none: the v2 one).
func (c *Cgroup) Placement() (name string, v1 []string) {
	if !c.v2 {
		for ctrl := range c.dirs {
			v1 = append(v1, ctrl)
		}
		slices.Sort(v1)
	}
	return c.name, v1
}

// Dir is the cgroup's dir for controller ctrl ("" if it has none).
func (c *Cgroup) Dir(ctrl string) string { return c.dirs[ctrl] }

// UnifiedPath is, on cgroup v2, the cgroup's path from the root of the
// hierarchy (what a container runtime's cgroupsPath and docker's
// --cgroup-parent name), and false on v1. A container nested there keeps
// the runtime's own cgroup (its device filter) and is held by this one's
// limits, and this one's counters (memory.events, and pids.events on
// kernels that count a refused fork in every ancestor) outlive it.
func (c *Cgroup) UnifiedPath() (string, bool) {
	if c == nil || !c.v2 {
		return "", false
	}
	for _, d := range c.dirs {
		rel, err := filepath.Rel(c.mount, d)
		if err != nil || strings.HasPrefix(rel, "..") {
			return "", false
		}
		return "/" + filepath.ToSlash(rel), true
	}
	return "", false
}

// Start starts cmd with its process born in the cgroup, so it never
// runs a single instruction outside it and is never migrated (a v1
// migration of a process, cgroup.procs, waits for an RCU grace period:
// 6-16 ms on a loaded VM). nil starts it as cmd.Start does. On failure
// nothing is left running.
//
// v2: clone3's CLONE_INTO_CGROUP. v1, where each thread has its own
// cgroup and a child is born in its forking thread's: the fork runs on a
// thread locked for it, which first moves itself into each of the
// cgroup's hierarchies ("0" in tasks: the writer's own thread, which the
// kernel moves without the threadgroup lock) and afterwards back into
// the supervisor's own cgroups. The runtime never clones a thread from a
// locked one (Go's template thread makes them), so no other thread of
// the supervisor lands in the cgroup. A thread that could not move back
// is never unlocked and ends with its goroutine; the child, whose
// parent-death signal follows its forking thread, is killed first.
func (c *Cgroup) Start(cmd *exec.Cmd) error {
	switch {
	case c == nil:
		return cmd.Start()
	case c.v2:
		return c.startV2(cmd)
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		dirs := c.Dirs()
		err := enterStart(dirs, cmd)
		if back := leave(dirs); back != nil {
			if err == nil {
				cmd.Process.Kill()
				cmd.Wait()
				err = back
			}
			done <- err
			return
		}
		runtime.UnlockOSThread()
		done <- err
	}()
	return <-done
}

// enterStart moves the calling thread into each of dirs, then starts cmd.
func enterStart(dirs []string, cmd *exec.Cmd) error {
	for _, d := range dirs {
		if err := writeFile(filepath.Join(d, "tasks"), "0"); err != nil {
			return err
		}
	}
	return cmd.Start()
}

// leave moves the calling thread back into the parent of each of dirs,
// made in the supervisor's own cgroups (where it already is, nothing
// moves).
func leave(dirs []string) error {
	var errs []error
	for _, d := range dirs {
		if err := writeFile(filepath.Join(filepath.Dir(d), "tasks"), "0"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *Cgroup) startV2(cmd *exec.Cmd) error {
	dir := c.Dirs()
	if len(dir) != 1 {
		return fmt.Errorf("%w: cgroup v2 session without its dir", ErrUnavailable)
	}
	fd, err := unix.Open(dir[0], unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer unix.Close(fd)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	return cmd.Start()
}

// Add moves the process pid (all its threads) into the cgroup. Add,
// Hit and Remove of a nil *Cgroup do nothing.
func (c *Cgroup) Add(pid int) error {
	if c == nil {
		return nil
	}
	for _, d := range c.Dirs() {
		if err := writeFile(filepath.Join(d, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// Adopt moves the process pid, started by a container runtime, into the
// cgroup: on cgroup v1, where a runtime's cgroup is one per hierarchy
// and the kernel counts a refused fork only in the forker's own cgroup,
// the session's processes must live in this one for its counters to see
// them. Only the hierarchies of the session's limits are moved; the
// runtime's others (devices, freezer) keep the process. pid must still be
// the runtime's: its cgroup path, in the hierarchy of every limit, must
// name tag (the container's id), checked with the process pinned by a
// pidfd before and after the move. v2 nests instead (UnifiedPath).
func (c *Cgroup) Adopt(pid int, tag string) error {
	if c == nil {
		return nil
	}
	if c.v2 {
		return fmt.Errorf("%w: adopt: a cgroup v2 session nests its container", ErrUnavailable)
	}
	if tag == "" || strings.ContainsAny(tag, "/\n") {
		return fmt.Errorf("%w: adopt: bad container id %q", ErrUnavailable, tag)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("%w: adopt %d: %v", ErrUnavailable, pid, err)
	}
	defer unix.Close(fd)
	if !inCgroup(pid, tag) {
		return fmt.Errorf("%w: adopt %d: not in the container's cgroup %s", ErrUnavailable, pid, tag)
	}
	if err := c.Add(pid); err != nil {
		return err
	}
	// Still alive (the pidfd), here, and still the container's process
	// in the hierarchies that were not moved.
	if unix.PidfdSendSignal(fd, 0, nil, 0) != nil || !inCgroup(pid, c.name) || !inCgroup(pid, tag) {
		return fmt.Errorf("%w: adopt %d: the process left before it was moved", ErrUnavailable, pid)
	}
	return nil
}

// peerDir is the name of the pids child OpenPeerTasks makes.
const peerDir = "peer"

// OpenPeerTasks moves the pids limit of a cgroup v1 session into a child,
// S/peer, and opens that child's tasks file for writing: loki-init's
// spawning thread writes "0" to it and forks, so the peer is born under
// the limit and the init, left in S, never counts against it. The
// kernel checks a v1 migration against the credentials of the file's
// opener, so the init may use it from its user namespace. nil (and no
// change) without a pids limit, or on v2, where the init keeps sharing
// the limit. Call it before anything is in the cgroup.
func (c *Cgroup) OpenPeerTasks() (*os.File, error) {
	if c == nil || c.v2 || c.dirs["pids"] == "" {
		return nil, nil
	}
	parent := c.dirs["pids"]
	dir := filepath.Join(parent, peerDir)
	if c.peer == "" {
		if err := mkdir(dir); err != nil {
			return nil, err
		}
		c.peer = dir
		if err := writeFile(filepath.Join(dir, "pids.max"), strconv.FormatInt(c.res.Pids(), 10)); err != nil {
			return nil, err
		}
		if err := writeFile(filepath.Join(parent, "pids.max"), "max"); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, "tasks"), os.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return f, nil
}

// Record writes the cgroup's dirs into the session dir of scratch, for
// CleanStale: there, a session that keeps no files of its own needs no
// scratch dir at all.
func (c *Cgroup) Record(scratch string) error {
	return os.WriteFile(filepath.Join(filepath.Dir(scratch), recordFile), []byte(strings.Join(c.Dirs(), "\n")+"\n"), 0o600)
}

// Hit returns the limits the session ran into: an error wrapping
// confine.ErrMemoryLimit when the OOM killer killed a member,
// confine.ErrPidsLimit when forks were refused, nil otherwise.
func (c *Cgroup) Hit() error {
	if c == nil {
		return nil
	}
	var errs []error
	if d := c.dirs["memory"]; d != "" {
		file, key := "memory.oom_control", "oom_kill"
		if c.v2 {
			file = "memory.events"
		}
		b, _ := os.ReadFile(filepath.Join(d, file))
		if n := parseKeyed(b, key); n > 0 {
			errs = append(errs, &confine.LimitError{Err: confine.ErrMemoryLimit, Count: n,
				Msg: fmt.Sprintf("%v: session exceeded --memory-max %s: the kernel killed %s", confine.ErrMemoryLimit, confine.FormatBytes(c.res.MemoryMax), plural(n, "process", "processes"))})
		}
	}
	if d := c.dirs["pids"]; d != "" {
		if c.peer != "" {
			d = c.peer
		}
		b, _ := os.ReadFile(filepath.Join(d, "pids.events"))
		if n := parseKeyed(b, "max"); n > 0 {
			what := "--pids-max " + strconv.FormatInt(c.res.Pids(), 10)
			if c.res.PidsMax == 0 {
				what += " (the default)"
			}
			errs = append(errs, &confine.LimitError{Err: confine.ErrPidsLimit, Count: n,
				Msg: fmt.Sprintf("%v: session reached %s: the kernel refused %s", confine.ErrPidsLimit, what, plural(n, "fork", "forks"))})
		}
	}
	return errors.Join(errs...)
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// Remove kills what is left in the cgroup and removes it.
func (c *Cgroup) Remove() error {
	if c == nil {
		return nil
	}
	if c.removeEmpty() {
		return nil
	}
	return removeDirs(c.name, c.Dirs())
}

// removeEmpty removes the cgroup's dirs, the peer child first, if they
// are all empty: the usual end, where the init was reaped and every
// process of its namespace with it. One rmdir each, without reading the
// tree or the members first; the kernel refuses (EBUSY) a cgroup with a
// process or a child cgroup in it, which then goes the long way.
func (c *Cgroup) removeEmpty() bool {
	dirs := c.Dirs()
	if c.peer != "" {
		dirs = append([]string{c.peer}, dirs...)
	}
	for _, d := range dirs {
		if err := rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
			return false
		}
	}
	return true
}

func (c *Cgroup) rmdirs() {
	if c.peer != "" {
		rmdir(c.peer)
	}
	for _, d := range c.Dirs() {
		rmdir(d)
	}
}

// removeDirs empties and removes dirs, each with the cgroups a runtime
// nested in it (deepest first: the kernel refuses to remove a cgroup with
// children).
func removeDirs(name string, dirs []string) error {
	var all []string
	for _, d := range dirs {
		all = append(all, subtree(d)...)
	}
	dirs = all
	deadline := time.Now().Add(removeWait)
	for {
		busy := false
		for _, d := range dirs {
			pids, err := members(d)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			if len(pids) > 0 {
				busy = true
				kill(d, name, pids)
			}
		}
		if !busy || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	var errs []error
	for _, d := range dirs {
		if err := rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// subtree lists dir's descendant cgroups, deepest first, and dir last.
func subtree(dir string) []string {
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, subtree(filepath.Join(dir, e.Name()))...)
		}
	}
	return append(out, dir)
}

// members reads a cgroup's processes.
func members(dir string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil && n > 0 {
			pids = append(pids, n)
		}
	}
	return pids, nil
}

// kill SIGKILLs pids through pidfds, each only while it is still in the
// cgroup name (a pid read from cgroup.procs may have been reused since).
// v2's cgroup.kill does it in one write where the kernel has it.
func kill(dir, name string, pids []int) {
	if writeFile(filepath.Join(dir, "cgroup.kill"), "1") == nil {
		return
	}
	for _, pid := range pids {
		if pid == os.Getpid() {
			// A thread of ours that Start could not move back.
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		if inCgroup(pid, name) {
			unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		}
		unix.Close(fd)
	}
}

// inCgroup reports whether pid's cgroup, in some hierarchy, is one named
// name (read after its pidfd was opened, so the pid is still that process).
func inCgroup(pid int, name string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && (filepath.Base(parts[2]) == name || strings.Contains(parts[2], "/"+name+"/")) {
			return true
		}
	}
	return false
}

// CleanStale removes the cgroups recorded in a stale session's scratch
// dir (a session.StaleCleaner). The record is untrusted: only a dir of a
// cgroup filesystem named after that session is touched.
func CleanStale(scratch string) {
	f, err := os.OpenFile(filepath.Join(filepath.Dir(scratch), recordFile), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		// Written by a supervisor from before the record moved.
		f, err = os.OpenFile(filepath.Join(scratch, recordFile), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return
	}
	b, err := io.ReadAll(io.LimitReader(f, 64*1024))
	f.Close()
	if err != nil {
		return
	}
	name := Name(scratch)
	var dirs []string
	for _, d := range strings.Split(string(b), "\n") {
		if d == "" || !filepath.IsAbs(d) || filepath.Clean(d) != d || filepath.Base(d) != name {
			continue
		}
		var st unix.Statfs_t
		if unix.Statfs(d, &st) != nil || (st.Type != unix.CGROUP_SUPER_MAGIC && st.Type != unix.CGROUP2_SUPER_MAGIC) {
			continue
		}
		dirs = append(dirs, d)
	}
	if len(dirs) > 0 {
		removeDirs(name, dirs)
	}
}

// sweepParents are the dirs SweepEmpty reads, sorted: where this host's
// session cgroups are made.
func (h Host) sweepParents() []string {
	parents := map[string]bool{}
	if h.UsesV1() {
		for _, c := range controllers {
			if d, ok := h.V1[c]; ok {
				parents[d] = true
			}
		}
	} else if h.UnifiedMount != "" {
		parent := filepath.Dir(h.Unified)
		if h.Unified == h.UnifiedMount || !strings.HasPrefix(h.Unified, h.UnifiedMount+"/") {
			parent = h.UnifiedMount
		}
		parents[parent] = true
	}
	return slices.Sorted(maps.Keys(parents))
}

// staleAge is how old an empty session cgroup must be before SweepEmpty
// removes it: a live session's cgroup is empty only between its Create
// and Add, milliseconds apart.
const staleAge = time.Minute

// SweepEmpty removes the empty session cgroups ("loki-session-*") beside
// the ones this process would make, older than staleAge: those of
// supervisors killed with no later session in their control root to
// sweep them. A cgroup with a process in it cannot be removed (the
// kernel refuses), so no live session loses its own.
func (h Host) SweepEmpty() {
	for _, parent := range h.sweepParents() {
		entries, err := os.ReadDir(parent)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() || !strings.HasPrefix(e.Name(), "loki-session-") {
				continue
			}
			dir := filepath.Join(parent, e.Name())
			info, err := e.Info()
			if err != nil || time.Since(info.ModTime()) < staleAge {
				continue
			}
			if pids, err := members(dir); err == nil && len(pids) == 0 {
				if peers, err := members(filepath.Join(dir, peerDir)); err == nil && len(peers) == 0 {
					rmdir(filepath.Join(dir, peerDir))
				}
				rmdir(dir)
			}
		}
	}
}
