//go:build linux

package acp

import (
	"bufio"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
	"golang.org/x/sys/unix"
)

// TestSocketStdinIsInteractive is the minimal form of what an ACP client
// built on Node.js does: child_process gives the agent (here loki-supervise)
// a Unix socketpair as stdin, not a pipe, writes one request and waits for
// the answer with stdin still open. The reply must come without EOF.
func TestSocketStdinIsInteractive(t *testing.T) {
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			argv := append(m.wrap(t), "sh", "-c", "read l; echo got $l")
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			ours, theirs := os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "agent-stdin")
			defer ours.Close()
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stdin = theirs
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			theirs.Close()
			w := testutil.Wait(cmd)
			defer func() {
				ours.Close() // EOF ends the peer; a kill is the bound
				w.Within(runBound)
			}()
			if _, err := ours.Write([]byte("hi\n")); err != nil {
				t.Fatal(err)
			}
			line := make(chan string, 1)
			go func() {
				l, _ := bufio.NewReader(out).ReadString('\n')
				line <- l
			}()
			select {
			case l := <-line:
				if l != "got hi\n" {
					t.Fatalf("peer answered %q, want %q", l, "got hi\n")
				}
			case <-time.After(30 * time.Second):
				t.Fatal("no answer within 30 s while stdin (a socket) stays open: the request never reached the peer")
			}
		})
	}
}
