package lineage

import (
	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// signalVerified re-checks the identity right before the signal (no pidfd
// on macOS).
func signalVerified(id procid.Identity, sig unix.Signal) bool {
	if !id.Matches() {
		return false
	}
	return unix.Kill(id.PID(), sig) == nil
}

func newPlatformSource() (source, bool) { return sysctlSource{}, false }

// sysctlSource reads kern.proc through sysctl. It cannot read another
// process's environment, so the lineage token is always unknown here.
type sysctlSource struct{}

func (sysctlSource) stat(pid int) (procStat, error) {
	st, err := procid.Stat(pid)
	if err != nil {
		return procStat{}, errGone
	}
	return procStat{state: st.State, ppid: st.PPID, sid: st.SID, start: st.Start}, nil
}

func (sysctlSource) children(int) ([]int, error) { return nil, errNoChildren }

func (sysctlSource) all() ([]int, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(kps))
	for i := range kps {
		out = append(out, int(kps[i].Proc.P_pid))
	}
	return out, nil
}

func (sysctlSource) hasToken(int, string) tokenAnswer { return tokenUnknown }

// pWExit is P_WEXIT of <sys/proc.h>: the process is working on exiting.
const pWExit = 0x00002000

func (sysctlSource) dying(pid int) bool {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	return err == nil && kp.Proc.P_flag&pWExit != 0
}

func (sysctlSource) reap(pid int) {
	var ws unix.WaitStatus
	_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
}

// KillByToken: macOS gives no other process's environment to read.
func KillByToken(string, int) (int, error) { return 0, ErrUnsupported }
