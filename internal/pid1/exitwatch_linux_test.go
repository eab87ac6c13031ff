package pid1

import (
	"syscall"
	"testing"
	"time"
)

// The pidfd watch reports the peer's end without reaping it: the loop's
// own wait still finds the status.
func TestWatchExitReportsWithoutReaping(t *testing.T) {
	pidfd := -1
	pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", "exec sleep 30"}, &syscall.ProcAttr{
		Sys: &syscall.SysProcAttr{PidFD: &pidfd},
	})
	if err != nil {
		t.Fatal(err)
	}
	if pidfd < 0 {
		t.Fatal("no pidfd from clone (Linux 5.3+ gives one)")
	}
	exited := make(chan struct{}, 1)
	watchExit(pidfd, exited)
	select {
	case <-exited:
		t.Fatal("reported before the child ended")
	case <-time.After(100 * time.Millisecond):
	}
	syscall.Kill(pid, syscall.SIGKILL)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("exit never reported")
	}
	var ws syscall.WaitStatus
	got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	if err != nil || got != pid || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("wait4 after the report: pid %d (%v) status %v: the watch must not reap", got, err, ws)
	}
}
