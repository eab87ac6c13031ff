//go:build linux

package sysmon

import (
	"os"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Calm sets the timer slack of the runtime's monitor thread to slack.
// The monitor is the first thread the runtime makes (before any package
// init), so the lowest thread id after the leader's (numbered by the
// /proc that lists them), and the thread of the process that sleeps in
// nanosleep(2): the runtime calls it from there, every other idle thread
// waits on a futex. Only a thread that is both is changed; a monitor
// caught awake is looked at again, a few times.
func Calm(slack time.Duration) {
	leader, err := os.Readlink("/proc/self")
	if err != nil {
		return
	}
	tids, err := tasks()
	if err != nil {
		return
	}
	monitor := -1
	for _, tid := range tids {
		if strconv.Itoa(tid) != leader && (monitor < 0 || tid < monitor) {
			monitor = tid
		}
	}
	if monitor < 0 {
		return
	}
	var buf [64]byte
	for try := 0; try < 8; try++ {
		if sleeping(monitor, buf[:]) {
			writeSlack(monitor, []byte(strconv.FormatInt(int64(slack), 10)))
			return
		}
	}
}

// tasks lists the process's threads, sorted.
func tasks() ([]int, error) {
	d, err := os.Open("/proc/self/task")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(names))
	for _, n := range names {
		if tid, err := strconv.Atoi(n); err == nil {
			tids = append(tids, tid)
		}
	}
	slices.Sort(tids)
	return tids, nil
}

// sleeping reports whether thread tid is blocked in nanosleep(2), from
// the syscall number /proc gives first.
func sleeping(tid int, buf []byte) bool {
	fd, err := unix.Open("/proc/self/task/"+strconv.Itoa(tid)+"/syscall", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	n, _ := unix.Read(fd, buf)
	unix.Close(fd)
	end := 0
	for end < n && buf[end] >= '0' && buf[end] <= '9' {
		end++
	}
	if end == 0 || end == n || buf[end] != ' ' {
		return false
	}
	nr, err := strconv.Atoi(string(buf[:end]))
	return err == nil && nr == unix.SYS_NANOSLEEP
}

// writeSlack writes a thread's timer slack: /proc/TID/timerslack_ns (a
// thread's own dir; task dirs have none), in the numbering of the /proc
// that listed it. It needs CAP_SYS_NICE over the thread.
func writeSlack(tid int, value []byte) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(tid)+"/timerslack_ns", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	unix.Write(fd, value)
	unix.Close(fd)
}
