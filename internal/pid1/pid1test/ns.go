//go:build linux

package pid1test

import (
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
)

// PIDs lists the host pids of the session's namespace right now.
func (s *Session) PIDs() []int { return testutil.NamespacePIDs(s.ns) }

// RequireGone fails the test unless no process of the namespace ns is left
// within timeout (the kernel kills the namespace when its PID 1 exits; the
// wait only absorbs scheduling delays on a loaded machine).
func RequireGone(t testing.TB, ns string, timeout time.Duration) {
	t.Helper()
	if ns == "" {
		t.Fatal("namespace identity was not recorded")
	}
	var left []int
	if !testutil.WaitUntil(timeout, func() bool { left = testutil.NamespacePIDs(ns); return len(left) == 0 }) {
		t.Fatalf("processes of %s survived its PID 1: %v", ns, left)
	}
}

// RequirePIDsGone fails the test unless none of pids names a live process
// of ns anymore (a pid reused outside the namespace does not count).
func RequirePIDsGone(t testing.TB, ns string, pids []int, timeout time.Duration) {
	t.Helper()
	var left []int
	gone := func() bool {
		left = left[:0]
		for _, pid := range pids {
			if testutil.PIDNamespace(pid) == ns {
				left = append(left, pid)
			}
		}
		return len(left) == 0
	}
	if !testutil.WaitUntil(timeout, gone) {
		t.Fatalf("pids %v of %s are still alive", left, ns)
	}
}
