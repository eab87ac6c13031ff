package session

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAwaitExit returns only once the process has exited, and leaves it
// for Wait to reap with its status.
func TestAwaitExit(t *testing.T) {
	cmd := exec.Command("sh", "-c", "read _; exit 3")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { AwaitExit(cmd.Process); close(done) }()
	select {
	case <-done:
		t.Fatal("returned while the process runs")
	case <-time.After(100 * time.Millisecond):
	}
	in.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("did not return after the exit")
	}
	if err := cmd.Wait(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("Wait: %v, want exit code 3", err)
	}
}

// TestAwaitExitAfterExit: a process already gone (a zombie) before the
// wait starts is seen at once, every time. Before, its pidfd's one edge
// could come and be cleared before the poller waited, and the wait hung
// (one session in about 35 with an init that exits at once).
func TestAwaitExitAfterExit(t *testing.T) {
	for i := 0; i < 300; i++ {
		cmd := exec.Command("true")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stat := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat"
		for {
			b, err := os.ReadFile(stat)
			if err != nil || strings.Contains(string(b), ") Z ") {
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
		done := make(chan struct{})
		go func() { AwaitExit(cmd.Process); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Wait()
			t.Fatalf("round %d: still waiting 10 s after the exit", i)
		}
		cmd.Wait()
	}
}
