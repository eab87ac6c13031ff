//go:build linux

package session

import (
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
)

// TestEOFRuleSaysWhatItCut: with host stdin at EOF, the session ends a
// peer still running 1 s later (the reference's single-shot rule). A peer
// that sat idle ends with 0; one that was still writing has its output cut,
// and that is 125 with the eof-cut-output line, never a silent 0: a
// 256 MiB writer into a slow reader, and a trickling writer. The none
// backend applies the same rule (before, it always waited).
func TestEOFRuleSaysWhatItCut(t *testing.T) {
	const cutLine = "ACP supervisor refused at supervision: eof-cut-output\n"
	for _, b := range relayBackends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Run("idle peer", func(t *testing.T) {
				r := run(t, supervise(t, b, nil, "sleep", "60"), "", generous)
				if r.code != 0 || r.stderr != "" {
					t.Fatalf("exit %d, stderr %q; want 0 and nothing", r.code, r.stderr)
				}
			})
			t.Run("trickling writer", func(t *testing.T) {
				r := run(t, supervise(t, b, nil, "sh", "-c", "while :; do echo x; sleep 0.05; done"), "", generous)
				if r.code != 125 || !strings.HasSuffix(r.stderr, cutLine) {
					t.Fatalf("exit %d, stderr %q; want 125 and %q", r.code, r.stderr, cutLine)
				}
			})
			t.Run("256 MiB into a slow reader", func(t *testing.T) {
				// Stdin is /dev/null here, which waits unless told.
				cmd := supervise(t, b, []string{"--eof", "end"}, "head", "-c", "268435456", "/dev/zero")
				out, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				var stderr syncBuffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				got := make(chan int64, 1)
				go func() {
					var n int64
					buf := make([]byte, 64<<10)
					for {
						k, err := out.Read(buf)
						n += int64(k)
						if err == io.EOF || err != nil {
							got <- n
							return
						}
						time.Sleep(10 * time.Millisecond) // ~6 MiB/s: 40 s for all of it
					}
				}()
				code := testutil.WaitExit(t, cmd, generous)
				n := <-got
				if n == 256<<20 {
					t.Fatalf("all %d bytes arrived (exit %d): the reader was not slow enough to test the cut", n, code)
				}
				if code != 125 || !strings.HasSuffix(stderr.String(), cutLine) {
					t.Fatalf("%d of %d bytes, exit %d, stderr %q; want 125 and %q", n, 256<<20, code, stderr.String(), cutLine)
				}
			})
		})
	}
}

// TestEOFRightAfterTheAnswer: on the relay path, a client that reads the
// peer's answer and hangs up at once has left an idle peer, which the EOF
// rule ends with 0 eof-ended. Before, loki-init counted what its
// forwarder moved only once the splice that moved it had returned, so the
// client could read the answer and close stdin before the count, and the
// rule took the answer for output written after the EOF: 125
// eof-cut-output in 1 of 10 runs, 1 of 5 with the session pinned to one
// CPU (the forwarder preempted by the woken relay). Every other run is
// pinned where taskset exists, each run is its own parallel subtest.
func TestEOFRightAfterTheAnswer(t *testing.T) {
	const runs = 40
	b := get("namespace")
	taskset, _ := exec.LookPath("taskset")
	var mu sync.Mutex
	ends := map[string]int{}
	t.Run("runs", func(t *testing.T) {
		for i := 0; i < runs; i++ {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				path := filepath.Join(t.TempDir(), "status.jsonl")
				cmd := supervise(t, b, []string{"--relay", "--status-file", path}, "sh", "-c", `read l; echo "got $l"; exec sleep 60`)
				if taskset != "" && i%2 == 1 {
					cmd.Args = append([]string{taskset, "-c", "0"}, cmd.Args...)
					cmd.Path = taskset
				}
				stdin, out, stderr := startPiped(t, cmd)
				w := testutil.Wait(cmd)
				io.WriteString(stdin, "req\n")
				if got := out.next(t, generous); got != "got req" {
					w.Kill()
					t.Fatalf("peer said %q, want %q", got, "got req")
				}
				stdin.Close()
				code, ok := w.Within(generous)
				if !ok {
					t.Fatalf("not ended within %v of its stdin's EOF: stderr %q", generous, stderr)
				}
				end := endOf(t, streamOf(t, path))
				mu.Lock()
				ends[fmt.Sprintf("%d %v", code, end["reason"])]++
				mu.Unlock()
				if code != 0 || end["reason"] != "eof-ended" {
					t.Errorf("exit %d, end %v, stderr %q; want 0 eof-ended", code, end["reason"], stderr)
				}
			})
		}
	})
	t.Logf("%d runs: %v", runs, ends)
}

// TestRelayedStdinIsReadOnly: on the relay path the peer reads the init's
// stdin pipe itself. It may reopen it for reading (`head /dev/stdin`), as
// it could the forwarder's pipe, whatever user it runs as, but never for
// writing: a writer it held would keep the pipe from hanging up, and the
// EOF rule (here: a peer idle past host stdin's end is ended, 0) would
// never come.
func TestRelayedStdinIsReadOnly(t *testing.T) {
	for _, b := range directBackends() {
		for _, flags := range b.hostileFlags {
			t.Run(b.Name+strings.Join(flags, "_"), func(t *testing.T) {
				cmd := supervise(t, b, append([]string{"--relay"}, flags...), "sh", "-c",
					"head -n 1 /dev/stdin; if (exec 3>/proc/self/fd/0) 2>/dev/null; then echo reopened; exec 3>/proc/self/fd/0; "+
						"else echo denied; fi; exec sleep 60")
				stdin, out, stderr := startPiped(t, cmd)
				io.WriteString(stdin, "hello\n")
				for _, want := range []string{"hello", "denied"} {
					if got := out.next(t, generous); got != want {
						cmd.Process.Kill() // a peer holding a writer would wait out its sleep
						testutil.WaitExit(t, cmd, generous)
						t.Fatalf("peer said %q, want %q; stderr %q", got, want, stderr)
					}
				}
				closed := time.Now()
				stdin.Close()
				if code := testutil.WaitExit(t, cmd, generous); code != 0 {
					t.Fatalf("exit %d, want 0; stderr %q", code, stderr)
				}
				if d := time.Since(closed); d > 30*time.Second {
					t.Fatalf("ended %v after EOF: the EOF rule did not end the idle peer", d)
				}
			})
		}
	}
}
