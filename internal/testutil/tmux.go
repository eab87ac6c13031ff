package testutil

import (
	"os/exec"
	"testing"
)

// Tmux runs tmux against a server of the test's own socket (-S), never a
// server of the machine's or another test's.
func Tmux(t testing.TB, sock string, args ...string) string {
	t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux %q: %v: %s", args, err, out)
	}
	return string(out)
}
