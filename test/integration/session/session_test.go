//go:build linux

package session

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/testutil"
)

const generous = 90 * time.Second

// TestExitCodes: the session exits with the peer's code; a peer killed by a
// signal is a failed run (125), through every backend.
func TestExitCodes(t *testing.T) {
	cases := []struct {
		name   string
		script string
		want   int
	}{
		{"success", "exit 0", 0},
		{"peer code", "exit 7", 7},
		{"highest code", "exit 255", 255},
		{"code 124 from the peer itself", "exit 124", 124},
		{"peer killed by a signal", "kill -9 $$", 125},
	}
	for _, b := range relayBackends() {
		t.Run(b.name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					r := run(t, supervise(t, b, nil, "sh", "-c", tc.script), "", generous)
					if r.code != tc.want {
						t.Fatalf("exit %d, want %d (stderr %q)", r.code, tc.want, r.stderr)
					}
				})
			}
		})
	}
}

// TestRelayByteExact pushes 32 MiB of random bytes through stdin; the peer
// copies them to both stdout and stderr. Both streams must come back
// identical to the input, which also proves they are not mixed.
func TestRelayByteExact(t *testing.T) {
	const size = 32 << 20
	input := make([]byte, size)
	if _, err := rand.Read(input); err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(input)
	for _, b := range relayBackends() {
		t.Run(b.name, func(t *testing.T) {
			cmd := supervise(t, b, nil, "sh", "-c", "tee /proc/self/fd/2")
			cmd.Stdin = bytes.NewReader(input)
			outH, errH := &countingHash{h: sha256.New()}, &countingHash{h: sha256.New()}
			cmd.Stdout, cmd.Stderr = outH, errH
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if code := waitBounded(t, cmd, 3*generous); code != 0 {
				t.Fatalf("exit %d", code)
			}
			for name, got := range map[string]*countingHash{"stdout": outH, "stderr": errH} {
				if got.n != size || !bytes.Equal(got.h.Sum(nil), want[:]) {
					t.Errorf("%s: %d bytes, sha256 %x; want %d bytes, %x", name, got.n, got.h.Sum(nil), size, want)
				}
			}
		})
	}
}

type countingHash struct {
	h interface {
		io.Writer
		Sum([]byte) []byte
	}
	n int
}

func (c *countingHash) Write(p []byte) (int, error) { c.n += len(p); return c.h.Write(p) }

// TestInteractiveRounds: a JSON-RPC style exchange, one request line in and
// one response line out per round, with the next request sent only after the
// response arrived: any buffering on the way would stall it.
func TestInteractiveRounds(t *testing.T) {
	server := `while IFS= read -r line; do echo "{\"jsonrpc\":\"2.0\",\"result\":$line}"; done`
	for _, b := range relayBackends() {
		t.Run(b.name, func(t *testing.T) {
			cmd := supervise(t, b, nil, "sh", "-c", server)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := newLineReader(stdout)
			for i := 1; i <= 8; i++ {
				req := fmt.Sprintf(`{"id":%d,"method":"ping"}`, i)
				if _, err := io.WriteString(stdin, req+"\n"); err != nil {
					t.Fatalf("round %d: write: %v", i, err)
				}
				want := `{"jsonrpc":"2.0","result":` + req + `}`
				if got := lines.next(t, 30*time.Second); got != want {
					t.Fatalf("round %d: got %q, want %q", i, got, want)
				}
			}
			stdin.Close()
			if code := waitBounded(t, cmd, generous); code != 0 {
				t.Fatalf("exit %d after stdin EOF (stderr %q)", code, stderr.String())
			}
		})
	}
}

// TestSupervisorKill9 orphans a running session by SIGKILL of loki-supervise
// and proves that every process of the session (init, peer, background
// children) is gone within the lease duration plus one poll, with slack for
// a loaded machine. The parent-death signal is disabled for the namespace
// backend so that only the lease can end it.
func TestSupervisorKill9(t *testing.T) {
	const (
		leaseDur = 2 * time.Second
		poll     = 100 * time.Millisecond
		slack    = 4 * time.Second
	)
	script := `sleep 1000 & sleep 1000 & echo ready; wait`
	for _, b := range allBackends() {
		t.Run(b.name, func(t *testing.T) {
			flags := []string{"--lease-duration", leaseDur.String(), "--renew-interval", "200ms", "--poll-interval", poll.String()}
			if b.name == "namespace" {
				flags = append(flags, "--no-parent-death-signal")
			}
			cmd := supervise(t, b, flags, "sh", "-c", script)
			stdin, err := cmd.StdinPipe() // kept open: the session must not end by EOF
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := newLineReader(stdout)
			if got := lines.next(t, 60*time.Second); got != "ready" {
				t.Fatalf("peer said %q", got)
			}
			var session []procid.Identity
			ok := testutil.WaitUntil(10*time.Second, func() bool {
				session = descendants(cmd.Process.Pid)
				return len(sleepers(session)) == 2
			})
			if !ok {
				t.Fatalf("the two background sleeps were not found among %v", session)
			}
			t.Cleanup(func() { testutil.KillLeftovers(session) })
			ns := testutil.PIDNamespace(sleepers(session)[0].PID())
			if ns == "" || ns == testutil.PIDNamespace(os.Getpid()) {
				t.Fatalf("peer is not in a namespace of its own (%q)", ns)
			}
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			killedAt := time.Now()
			if b.name == "namespace" {
				time.Sleep(300 * time.Millisecond)
				if len(testutil.Alive(session)) == 0 {
					t.Fatal("session vanished at once although the parent-death signal was off: not the lease")
				}
			}
			bound := leaseDur + poll + slack
			if !testutil.WaitUntil(bound, func() bool { return len(testutil.Alive(session)) == 0 && len(testutil.NamespacePIDs(ns)) == 0 }) {
				t.Fatalf("after %v still alive: %v; in %s: %v", bound, testutil.Alive(session), ns, testutil.NamespacePIDs(ns))
			}
			t.Logf("session gone %v after kill -9 (lease %v)", time.Since(killedAt).Round(time.Millisecond), leaseDur)
		})
	}
}

// sleepers picks the peer's background "sleep 1000" processes.
func sleepers(ids []procid.Identity) []procid.Identity {
	var out []procid.Identity
	for _, id := range ids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", id.PID()))
		if strings.HasPrefix(string(cmdline), "sleep\x001000") {
			out = append(out, id)
		}
	}
	return out
}

// TestParentDeathSpeedUp: with the default parent-death signal, a killed
// supervisor takes the namespace down too (well within the lease bound).
func TestParentDeathSpeedUp(t *testing.T) {
	b := namespaceBackend()
	cmd := supervise(t, b, []string{"--lease-duration", "30s"}, "sh", "-c", "sleep 1000 & echo ready; wait")
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if got := newLineReader(stdout).next(t, 60*time.Second); got != "ready" {
		t.Fatalf("peer said %q", got)
	}
	var session []procid.Identity
	if !testutil.WaitUntil(10*time.Second, func() bool { session = descendants(cmd.Process.Pid); return len(sleepers(session)) == 1 }) {
		t.Fatalf("background sleep not found among %v", session)
	}
	t.Cleanup(func() { testutil.KillLeftovers(session) })
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if !testutil.WaitUntil(10*time.Second, func() bool { return len(testutil.Alive(session)) == 0 }) {
		t.Fatalf("still alive 10s after kill -9 with a 30s lease: %v", testutil.Alive(session))
	}
}

// TestSignals: SIGTERM to the supervisor is forwarded; a peer that exits on
// it decides the code; a peer that ignores it is killed after
// --stop-timeout and the code is 128+15; nothing of the session survives.
func TestSignals(t *testing.T) {
	cases := []struct {
		name   string
		script string
		flags  []string
		want   int
		line   string // on stderr, for a peer the forwarded signal ended
	}{
		{"peer exits on TERM", `trap 'exit 42' TERM; echo ready; while :; do sleep 0.1; done`, nil, 42, ""},
		{"peer ignores TERM", `trap '' TERM; echo ready; while :; do sleep 0.1; done`,
			[]string{"--grace", "60s", "--stop-timeout", "2s"}, 128 + 15, ""},
		{"peer ended by TERM", `echo ready; exec sleep 1000`, nil, 125, "SIGTERM was forwarded to it"},
	}
	for _, b := range relayBackends() {
		t.Run(b.name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					cmd := supervise(t, b, tc.flags, "sh", "-c", tc.script)
					stdin, _ := cmd.StdinPipe()
					defer stdin.Close()
					stdout, _ := cmd.StdoutPipe()
					var stderr syncBuffer
					cmd.Stderr = &stderr
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					if got := newLineReader(stdout).next(t, 60*time.Second); got != "ready" {
						t.Fatalf("peer said %q", got)
					}
					session := descendants(cmd.Process.Pid)
					t.Cleanup(func() { testutil.KillLeftovers(session) })
					cmd.Process.Signal(syscall.SIGTERM)
					if code := waitBounded(t, cmd, generous); code != tc.want {
						t.Fatalf("exit %d, want %d (stderr %q)", code, tc.want, stderr.String())
					}
					// A forwarded signal is what happened, not a refusal.
					if tc.line != "" && (!strings.Contains(stderr.String(), tc.line) || strings.Contains(stderr.String(), "refused")) {
						t.Fatalf("stderr %q: want a line with %q and no refusal", stderr.String(), tc.line)
					}
					if !testutil.WaitUntil(10*time.Second, func() bool { return len(testutil.Alive(session)) == 0 }) {
						t.Fatalf("left behind: %v", testutil.Alive(session))
					}
				})
			}
		})
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSupervisorStopped freezes loki-supervise with SIGSTOP: its pipes stay
// open, only the renewals stop. The session must end by lease expiry (not
// earlier than half the lease, and within lease + poll + slack), and once
// resumed the supervisor reports the init's verdict, 124.
func TestSupervisorStopped(t *testing.T) {
	const (
		leaseDur = 2 * time.Second
		poll     = 100 * time.Millisecond
		slack    = 4 * time.Second
	)
	for _, b := range allBackends() {
		t.Run(b.name, func(t *testing.T) {
			flags := []string{"--lease-duration", leaseDur.String(), "--renew-interval", "200ms", "--poll-interval", poll.String()}
			cmd := supervise(t, b, flags, "sh", "-c", "sleep 1000 & echo ready; wait")
			stdin, _ := cmd.StdinPipe()
			defer stdin.Close()
			stdout, _ := cmd.StdoutPipe()
			var stderr syncBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Signal(syscall.SIGCONT) })
			if got := newLineReader(stdout).next(t, 60*time.Second); got != "ready" {
				t.Fatalf("peer said %q", got)
			}
			var session []procid.Identity
			if !testutil.WaitUntil(10*time.Second, func() bool { session = descendants(cmd.Process.Pid); return len(sleepers(session)) == 1 }) {
				t.Fatalf("background sleep not found among %v", session)
			}
			t.Cleanup(func() { testutil.KillLeftovers(session) })
			cmd.Process.Signal(syscall.SIGSTOP)
			stoppedAt := time.Now()
			if testutil.WaitUntil(leaseDur/2, func() bool { return len(testutil.Alive(sleepers(session))) == 0 }) {
				t.Fatalf("session ended %v after the stop, before the lease could expire", time.Since(stoppedAt))
			}
			bound := leaseDur + poll + slack
			if !testutil.WaitUntil(bound, func() bool { return len(testutil.Alive(sleepers(session))) == 0 }) {
				t.Fatalf("still alive %v after renewals stopped: %v", bound, testutil.Alive(session))
			}
			t.Logf("session gone %v after renewals stopped (lease %v)", time.Since(stoppedAt).Round(time.Millisecond), leaseDur)
			cmd.Process.Signal(syscall.SIGCONT)
			if code := waitBounded(t, cmd, generous); code != 124 {
				t.Fatalf("supervisor exit %d after the lease expired, want 124", code)
			}
			// The init's 124 is silent; the supervisor says what happened.
			if !strings.Contains(stderr.String(), "loki-supervise: the lease expired: it was not renewed for") {
				t.Fatalf("stderr %q: want the lease-expired line", stderr.String())
			}
		})
	}
}
