package procid

import (
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

func TestZombieAndReapedDoNotMatch(t *testing.T) {
	cmd := exec.Command("sh", "-c", "read x")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	id, err := Capture(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if !id.Matches() {
		t.Fatal("live child does not match its own identity")
	}
	stdin.Close()
	// Wait for the exit without reaping: the child stays a zombie.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, id.PID(), &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	if st, err := Stat(id.PID()); err != nil || st.State != 'Z' {
		t.Fatalf("expected a zombie, got %+v %v", st, err)
	}
	if id.Matches() {
		t.Fatal("zombie matched")
	}
	cmd.Wait()
	if id.Matches() {
		t.Fatal("reaped process matched")
	}
}
