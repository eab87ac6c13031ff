package procid

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// Stat reads kern.proc.pid through sysctl; no cgo.
func Stat(pid int) (Status, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp == nil || int(kp.Proc.P_pid) != pid {
		return Status{}, fmt.Errorf("procid: pid %d: %w", pid, ErrGone)
	}
	st := Status{
		PPID:  int(kp.Eproc.Ppid),
		PGID:  int(kp.Eproc.Pgid),
		Start: uint64(kp.Proc.P_starttime.Sec)*1_000_000 + uint64(kp.Proc.P_starttime.Usec),
	}
	// p_stat: 1 idle, 2 run, 3 sleep, 4 stop, 5 zombie.
	switch kp.Proc.P_stat {
	case 5:
		st.State = 'Z'
	case 4:
		st.State = 'T'
	case 2:
		st.State = 'R'
	default:
		st.State = 'S'
	}
	if sid, err := unix.Getsid(pid); err == nil {
		st.SID = sid
	}
	return st, nil
}

// BirthToken returns "darwin:<sec>:<usec>" from the process start time.
func BirthToken(pid int) (string, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp == nil || int(kp.Proc.P_pid) != pid {
		return psToken(pid)
	}
	t := kp.Proc.P_starttime
	return "darwin:" + strconv.FormatInt(int64(t.Sec), 10) + ":" + strconv.FormatInt(int64(t.Usec), 10), nil
}
