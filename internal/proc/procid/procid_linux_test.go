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

func TestParseStatCommandWithParens(t *testing.T) {
	// A command name may contain ") (" and spaces: fields start after the last ')'.
	line := "4242 (evil) S 1 2 (x)) R 10 20 30 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10\n"
	st, err := ParseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if st.State != 'R' || st.PPID != 10 || st.PGID != 20 || st.SID != 30 || st.Flags != 4194560 || st.Start != 987654 {
		t.Fatalf("parsed %+v", st)
	}
	if _, err := ParseStat([]byte("12 (short) S 1 2")); err == nil {
		t.Fatal("short stat accepted")
	}
}
