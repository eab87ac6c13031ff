package lineage

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// procSource reads /proc. root is "/proc" except in tests that simulate an
// unreadable /proc.
type procSource struct{ root string }

func (s procSource) path(pid int, rest string) string {
	return s.root + "/" + strconv.Itoa(pid) + rest
}

func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH)
}

func (s procSource) stat(pid int) (procStat, error) {
	b, err := os.ReadFile(s.path(pid, "/stat"))
	if err != nil {
		if gone(err) {
			return procStat{}, errGone
		}
		return procStat{}, err
	}
	st, err := procid.ParseStat(b)
	if err != nil {
		return procStat{}, err
	}
	return procStat{state: st.State, ppid: st.PPID, sid: st.SID, start: st.Start}, nil
}

// children unions /proc/PID/task/*/children: a child belongs to the thread
// that forked it.
func (s procSource) children(pid int) ([]int, error) {
	tasks, err := readNames(s.path(pid, "/task"))
	if err != nil {
		if gone(err) {
			return nil, errGone
		}
		return nil, err
	}
	var out []int
	for _, tid := range tasks {
		b, err := os.ReadFile(s.path(pid, "/task/"+tid+"/children"))
		if err != nil {
			if gone(err) {
				if _, serr := os.Stat(s.path(pid, "/task/"+tid)); serr == nil {
					return nil, errNoChildren // the thread is there, the file is not
				}
				continue // the thread exited while we looked
			}
			return nil, err
		}
		for _, f := range bytes.Fields(b) {
			if k, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, k)
			}
		}
	}
	return out, nil
}

func (s procSource) all() ([]int, error) {
	names, err := readNames(s.root)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(names))
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		if pid, err := strconv.Atoi(n); err == nil {
			out = append(out, pid)
		}
	}
	return out, nil
}

// hasToken reads the environment block. The kernel returns an empty block
// while a process is being reaped (and for kernel threads), so empty is
// unknown, not no.
func (s procSource) hasToken(pid int, token string) tokenAnswer {
	b, err := os.ReadFile(s.path(pid, "/environ"))
	if err != nil || len(b) == 0 {
		return tokenUnknown
	}
	want := []byte(TokenEnv + "=" + token)
	for _, kv := range bytes.Split(b, []byte{0}) {
		if bytes.Equal(kv, want) {
			return tokenYes
		}
	}
	return tokenNo
}

// pfExiting is PF_EXITING in the flags field of /proc/PID/stat: the task
// has entered do_exit.
const pfExiting = 0x4

// sigkillBit is SIGKILL in the hex masks of /proc/PID/status.
const sigkillBit = uint64(1) << (unix.SIGKILL - 1)

// dying reports a process that can no longer run user code: it is in
// do_exit, or SIGKILL is pending. The kernel turns every fatal signal with
// default disposition (a group SIGTERM to sh, sleep, ...) into a pending
// SIGKILL on delivery, so a process killed together with the runner's
// group is recognised from the moment the signal was sent, before it was
// scheduled to die. Unreadable means not dying: never a reason to forgive.
func (s procSource) dying(pid int) bool {
	b, err := os.ReadFile(s.path(pid, "/stat"))
	if err != nil {
		return false
	}
	if st, err := procid.ParseStat(b); err == nil && st.Flags&pfExiting != 0 {
		return true
	}
	b, err = os.ReadFile(s.path(pid, "/status"))
	if err != nil {
		return false
	}
	return sigkillPending(b)
}

// sigkillPending reads SigPnd (the thread's) and ShdPnd (the process's).
func sigkillPending(status []byte) bool {
	for _, line := range bytes.Split(status, []byte{'\n'}) {
		k, v, ok := bytes.Cut(line, []byte{':'})
		if !ok || (string(k) != "SigPnd" && string(k) != "ShdPnd") {
			continue
		}
		if m, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 16, 64); err == nil && m&sigkillBit != 0 {
			return true
		}
	}
	return false
}

func (procSource) reap(pid int) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// readNames lists a directory without sorting it.
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// childrenListsWork probes CONFIG_PROC_CHILDREN once.
func childrenListsWork(s procSource) bool {
	_, err := s.children(os.Getpid())
	return err == nil
}
