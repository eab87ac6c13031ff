package lineage

import (
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// becomeSubreaper makes this process the child subreaper once: orphans of
// the lineage are reparented here instead of to the host's init.
var becomeSubreaper = sync.OnceValue(func() bool {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil
})

func selfExecutable() (string, error) { return "/proc/self/exe", nil }

// sysProcAttr: new session, a pidfd held from birth, and the cgroup if any.
func sysProcAttr(pidfd *int, cg *cgroup) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setsid: true, PidFD: pidfd}
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

func closeFD(fd int) { _ = unix.Close(fd) }

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
