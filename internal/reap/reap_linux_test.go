package reap

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// Real children: every one is collected, and the peer's real status (an
// exit code or a signal) is kept.
func TestSweepRealChildren(t *testing.T) {
	cases := []struct {
		name string
		argv []string
		want Status
	}{
		{"exit code", []string{"/bin/sh", "-c", "exit 3"}, Status{Exited: true, Code: 3}},
		{"signal", []string{"/bin/sh", "-c", "kill -TERM $$"}, Status{Signal: int(syscall.SIGTERM)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := New()
			chld := make(chan os.Signal, 1)
			signal.Notify(chld, syscall.SIGCHLD)
			defer signal.Stop(chld)
			var others []int
			for i := 0; i < 5; i++ {
				pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
				if err != nil {
					t.Fatal(err)
				}
				others = append(others, pid)
			}
			peer, err := syscall.ForkExec(tc.argv[0], tc.argv, &syscall.ProcAttr{})
			if err != nil {
				t.Fatal(err)
			}
			r.SetPeer(peer)
			deadline := time.Now().Add(30 * time.Second)
			for r.Reaped() < len(others)+1 {
				if time.Now().After(deadline) {
					t.Fatalf("reaped %d of %d", r.Reaped(), len(others)+1)
				}
				if r.Sweep(); r.Reaped() == len(others)+1 {
					break
				}
				select { // SIGCHLD drives the sweeps, as in the init
				case <-chld:
				case <-time.After(time.Second):
				}
			}
			st, ok := r.Peer()
			if !ok || st != tc.want {
				t.Fatalf("peer %+v ok=%v, want %+v", st, ok, tc.want)
			}
			if n, more := r.Sweep(); n != 0 || more {
				t.Fatalf("extra sweep collected %d", n)
			}
		})
	}
}
