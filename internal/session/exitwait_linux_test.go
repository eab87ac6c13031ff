package session

import (
	"os/exec"
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
