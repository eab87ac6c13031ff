package lineage

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// becomeSubreaper makes this process the child subreaper once: orphans of
// the lineage are reparented here instead of to the host's init.
var becomeSubreaper = sync.OnceValue(func() bool {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil
})

func selfExecutable() (string, error) { return "/proc/self/exe", nil }

// sysProcAttr: new session, a pidfd held from birth, the cgroup if any,
// and SIGKILL when the supervisor dies (even by kill -9): a runner must
// not outlive the process that records and stops it. The kernel sends it
// when the thread that forked exits; Go never ends a thread that is not
// locked, so in practice that is the supervisor's death.
func sysProcAttr(pidfd *int, cg *cgroup) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setsid: true, PidFD: pidfd, Pdeathsig: syscall.SIGKILL}
	if cg != nil && cg.dfd >= 0 {
		attr.UseCgroupFD = true
		attr.CgroupFD = cg.dfd
	}
	return attr
}

// signalVerified sends sig to id only if id still names the same process.
// A pidfd is opened first and the identity checked after: if the check
// passes, the pidfd refers to that very process, so pid reuse between the
// check and the signal cannot redirect it.
func signalVerified(id procid.Identity, sig unix.Signal) bool {
	fd, err := unix.PidfdOpen(id.PID(), 0)
	if err != nil {
		if !id.Matches() {
			return false
		}
		return unix.Kill(id.PID(), sig) == nil // kernel < 5.3
	}
	defer unix.Close(fd)
	if !id.Matches() {
		return false
	}
	return unix.PidfdSendSignal(fd, sig, nil, 0) == nil
}

func newPlatformSource() (src source, treeWalk bool) {
	s := procSource{root: "/proc"}
	return s, childrenListsWork(s)
}

// awaitExit blocks until the child pid has exited, leaving it unreaped
// (waitid WNOWAIT). False means it could not wait that way.
func awaitExit(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err == nil
		}
	}
}

// KillByToken sends SIGKILL to every process of this PID namespace whose
// environment carries the lineage token (TokenEnv), the runner's
// descendants that left its session or group included, and returns how
// many it signalled. It is for a run whose supervisor died: nothing else
// will stop them. Each process is pinned by a pidfd before its
// environment is read, so a pid reused meanwhile is never signalled. It
// repeats until a pass finds no one (a member may fork while it runs),
// bounded by rounds. A member that cleared its environment is not found.
func KillByToken(token string, rounds int) (int, error) {
	if len(token) < 16 {
		return 0, fmt.Errorf("%w: no lineage token", ErrTracking)
	}
	src := procSource{root: "/proc"}
	self := os.Getpid()
	killed := 0
	for r := 0; r < rounds; r++ {
		pids, err := src.all()
		if err != nil {
			return killed, fmt.Errorf("%w: %v", ErrTracking, err)
		}
		found := 0
		for _, pid := range pids {
			if pid == self || pid <= 1 {
				continue
			}
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				continue
			}
			if src.hasToken(pid, token) == tokenYes && unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil {
				found++
			}
			unix.Close(fd)
		}
		killed += found
		if found == 0 {
			return killed, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return killed, nil
}

const keeperSupported = true
