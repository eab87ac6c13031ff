//go:build linux

package pid1test

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// NamespacePIDs lists the host pids of the processes currently in the PID
// namespace ns ("pid:[inode]"), found through the host's /proc.
func NamespacePIDs(ns string) []int {
	if ns == "" {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); err == nil && link == ns {
			pids = append(pids, pid)
		}
	}
	return pids
}

// PIDs lists the host pids of the session's namespace right now.
func (s *Session) PIDs() []int { return NamespacePIDs(s.ns) }

// RequireGone fails the test unless no process of the namespace ns is left
// within timeout (the kernel kills the namespace when its PID 1 exits; the
// wait only absorbs scheduling delays on a loaded machine).
func RequireGone(t testing.TB, ns string, timeout time.Duration) {
	t.Helper()
	if ns == "" {
		t.Fatal("namespace identity was not recorded")
	}
	deadline := time.Now().Add(timeout)
	for {
		left := NamespacePIDs(ns)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of %s survived its PID 1: %v", ns, left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// RequirePIDsGone fails the test unless none of pids names a live process
// of ns anymore (a pid reused outside the namespace does not count).
func RequirePIDsGone(t testing.TB, ns string, pids []int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var left []int
		for _, pid := range pids {
			if link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); err == nil && link == ns {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pids %v of %s are still alive", left, ns)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitFor polls cond until it is true or timeout passes (for state that
// offers no event to wait on, like a file another process creates).
func WaitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
