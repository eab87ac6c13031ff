package lineage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// cgroup is a cgroup v2 directory created for one runner. The runner is born
// in it (clone3 CLONE_INTO_CGROUP), so everything it forks is in it or below
// it unless a privileged process moves it out.
type cgroup struct {
	dir string
	dfd int // O_DIRECTORY fd for SysProcAttr.CgroupFD; -1 once closed
}

// cgroupV2Root returns the cgroup2 mount point and this process's v2 path,
// from /proc/self/mountinfo and /proc/self/cgroup. Hybrid hosts (v1
// controllers plus a v2 "unified" mount) qualify.
func cgroupV2Root() (string, error) {
	mount, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			return filepath.Join(mount, filepath.Clean("/"+rest)), nil
		}
	}
	return "", errors.New("no cgroup v2 membership")
}

func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root mountpoint opts... - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		if fs := strings.Fields(post); len(fs) > 0 && fs[0] == "cgroup2" {
			if f := strings.Fields(pre); len(f) >= 5 && f[3] == "/" {
				return f[4], nil
			}
		}
	}
	return "", errors.New("no cgroup2 mount")
}

// newCgroup makes a child cgroup of ours that has cgroup.kill, or returns
// nil: containment then degrades to subreaper + lineage.
func newCgroup(tag string) *cgroup {
	parent, err := cgroupV2Root()
	if err != nil {
		return nil
	}
	self := os.Getpid()
	st, err := procSource{root: "/proc"}.stat(self)
	if err != nil {
		return nil
	}
	sweepCgroups(parent)
	dir := filepath.Join(parent, cgroupName(self, st.start, tag))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		_ = os.Remove(dir) // kernel < 5.14: no kill switch, not worth it
		return nil
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil
	}
	return &cgroup{dir: dir, dfd: dfd}
}

// cgroupPrefix starts the name of every runner cgroup. The name carries
// the owning supervisor's pid and start time, so that the cgroup of a
// supervisor that died without cleaning up (kill -9) can be recognised as
// abandoned and removed by the next one.
const cgroupPrefix = "loki-lineage-"

func cgroupName(pid int, start uint64, tag string) string {
	return cgroupPrefix + strconv.Itoa(pid) + "-" + strconv.FormatUint(start, 10) + "-" + tag
}

// cgroupOwner parses a name made by cgroupName.
func cgroupOwner(name string) (pid int, start uint64, ok bool) {
	rest, found := strings.CutPrefix(name, cgroupPrefix)
	if !found {
		return 0, 0, false
	}
	f := strings.Split(rest, "-")
	if len(f) != 3 {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	return pid, start, err1 == nil && err2 == nil && pid > 0
}

// sweepCgroups removes runner cgroups whose supervisor is gone (its pid
// no longer exists or names a process with another start time). Only an
// empty cgroup can be removed: the kernel refuses one that still holds a
// process (an orphaned runner keeps its cgroup until it exits, and the next
// sweep after that removes it). A live supervisor's cgroup is never touched.
func sweepCgroups(parent string) {
	names, err := readNames(parent)
	if err != nil {
		return
	}
	src := procSource{root: "/proc"}
	for _, n := range names {
		pid, start, ok := cgroupOwner(n)
		if !ok {
			continue
		}
		if st, err := src.stat(pid); !errors.Is(err, errGone) && (err != nil || st.start == start) {
			continue // the owner lives, or we cannot tell
		}
		(&cgroup{dir: filepath.Join(parent, n), dfd: -1}).remove()
	}
}

// pids lists every process in the cgroup and its descendant cgroups.
func (c *cgroup) pids() ([]int, error) {
	var out []int
	err := filepath.WalkDir(c.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if p != c.dir && errors.Is(err, os.ErrNotExist) {
				return nil // a nested cgroup went away
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		if err != nil {
			if p != c.dir && errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		for _, f := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, pid)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", c.dir, err)
	}
	return out, nil
}

// populated reads cgroup.events: false once no process is left in the tree.
func (c *cgroup) populated() bool {
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.events"))
	if err != nil {
		return true // cannot tell: assume the worst
	}
	return bytes.Contains(b, []byte("populated 1"))
}

// kill SIGKILLs every process of the cgroup tree and waits (bounded) until
// the kernel reports it empty. It reports whether it is empty.
func (c *cgroup) kill(wait time.Duration) bool {
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		return !c.populated()
	}
	return c.waitEmpty(wait)
}

// waitEmpty waits up to wait for cgroup.events to say "populated 0" and
// reports whether it did. A process that was just killed stays counted
// there until the kernel has torn it down (on recent kernels, until after
// its final context switch, past the moment it became a zombie or was
// reaped), so "populated" right after a kill is no evidence of a survivor.
// The kernel signals every change of the file to inotify; the poll timeout
// is only a fallback should a notification be missed.
func (c *cgroup) waitEmpty(wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err == nil {
		defer unix.Close(fd)
		if _, err := unix.InotifyAddWatch(fd, filepath.Join(c.dir, "cgroup.events"), unix.IN_MODIFY); err != nil {
			unix.Close(fd)
			fd = -1
		}
	} else {
		fd = -1
	}
	for c.populated() {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		waitEvent(fd, min(left, pollInterval))
	}
	return true
}

// waitEvent blocks until fd (an inotify fd, or -1) is readable or d passed,
// and drains it.
func waitEvent(fd int, d time.Duration) {
	if fd < 0 {
		time.Sleep(d)
		return
	}
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if n, _ := unix.Poll(pfd, int(d.Milliseconds())+1); n > 0 {
		var buf [512]byte
		for {
			if n, err := unix.Read(fd, buf[:]); n <= 0 || err != nil {
				return
			}
		}
	}
}

// remove closes the fd and removes the (empty) cgroup tree, best effort.
func (c *cgroup) remove() {
	if c.dfd >= 0 {
		_ = unix.Close(c.dfd)
		c.dfd = -1
	}
	var dirs []string
	_ = filepath.WalkDir(c.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = unix.Rmdir(dirs[i])
	}
}

// closeFD drops the directory fd once the runner was born (or not).
func (c *cgroup) closeFD() {
	if c.dfd >= 0 {
		_ = unix.Close(c.dfd)
		c.dfd = -1
	}
}

// reclaimCgroup kills what is left in the cgroup of a runner whose
// supervisor died, and removes it (the keeper's last act).
func reclaimCgroup(dir string) {
	c := &cgroup{dir: dir, dfd: -1}
	if c.populated() {
		c.kill(time.Second)
	}
	c.remove()
}
