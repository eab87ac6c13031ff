package testutil

import (
	"os"
	"os/exec"
	"testing"
)

// TmuxCommand is tmux against a server of the test's own socket (-S),
// never a server of the machine's or another test's. A server it starts
// runs its commands with /bin/sh: tmux otherwise takes $SHELL, and
// without one the passwd entry's shell, which for nobody is nologin, so
// the first window would end at once and the server with it.
func TmuxCommand(sock string, args ...string) *exec.Cmd {
	cmd := exec.Command("tmux", append([]string{"-S", sock}, args...)...)
	cmd.Env = append(os.Environ(), "SHELL=/bin/sh")
	return cmd
}

// Tmux runs TmuxCommand and fails the test if tmux fails.
func Tmux(t testing.TB, sock string, args ...string) string {
	t.Helper()
	out, err := TmuxCommand(sock, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux %q: %v: %s", args, err, out)
	}
	return string(out)
}
