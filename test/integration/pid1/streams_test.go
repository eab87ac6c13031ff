//go:build linux

package pid1

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/pid1/pid1test"
)

// Tens of MiB go stdin -> peer -> stdout and, separately, -> stderr, byte
// for byte (checked by SHA-256 on both sides).
func TestStreamsAreByteExact(t *testing.T) {
	t.Parallel()
	const size = 24 << 20
	data := make([]byte, size)
	rng := rand.NewChaCha8([32]byte{7})
	rng.Read(data)
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	out, errw := newHashWriter(), newHashWriter()
	s := start(t, pid1test.Config{
		Spec:   shell("tee /dev/fd/2"),
		Stdin:  strings.NewReader(string(data)),
		Stdout: out, Stderr: errw,
	})
	r := s.Wait(waitLong)
	requireCode(t, r, 0)
	if out.n != size || out.sum() != want {
		t.Fatalf("stdout: %d bytes sha256 %s, want %d %s", out.n, out.sum(), size, want)
	}
	if errw.n != size || errw.sum() != want {
		t.Fatalf("stderr: %d bytes sha256 %s, want %d %s", errw.n, errw.sum(), size, want)
	}
}

// Host stdin EOF with the peer still running one second later ends the
// session with 0, and the peer with it.
func TestStdinEOFEndsRunningPeer(t *testing.T) {
	t.Parallel()
	marks := markerDir(t)
	ready := filepath.Join(marks, "ready")
	s := start(t, pid1test.Config{KeepStdinOpen: true, Spec: shell("echo $$ > " + ready + "; exec sleep 600")})
	waitFile(t, ready)
	pids := s.PIDs()
	closed := time.Now()
	s.CloseStdin()
	r := s.Wait(waitShort)
	requireCode(t, r, 0)
	if d := time.Since(closed); d < time.Second-50*time.Millisecond {
		t.Fatalf("ended %v after EOF, want the 1 s completion window first", d)
	}
	pid1test.RequirePIDsGone(t, s.Namespace(), pids, waitShort)
}

// With -wait-after-eof, host stdin EOF does not end the session: a peer
// that answers 2 s after reading its whole input is heard, with its code.
func TestWaitAfterEOFHearsLateAnswer(t *testing.T) {
	t.Parallel()
	s := start(t, pid1test.Config{Flags: []string{"-wait-after-eof"},
		Spec: shell("cat >/dev/null; sleep 2; echo late; exit 3")})
	r := s.Wait(waitShort)
	requireCode(t, r, 3)
	if string(r.Stdout) != "late\n" {
		t.Fatalf("stdout %q, want the late answer", r.Stdout)
	}
}

// Host stdin that is a pipe is the peer's own stdin once the prelude is
// read: no forwarder, whose hop was a thread wakeup on every message. Its
// writer's hang-up is still host stdin EOF (the single-shot rule above).
func TestPeerReadsHostStdinPipe(t *testing.T) {
	t.Parallel()
	ready := filepath.Join(markerDir(t), "ready")
	s := start(t, pid1test.Config{KeepStdinOpen: true, Spec: shell("readlink /proc/self/fd/0 > " + ready + "; exec cat")})
	host, err := os.Readlink("/proc/" + strconv.Itoa(s.PID()) + "/fd/0")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(waitFile(t, ready))
	s.CloseStdin()
	requireCode(t, s.Wait(waitShort), 0)
	if got != host {
		t.Fatalf("the peer's stdin is %s, the init's %s: want the same pipe", got, host)
	}
}

// A nonzero exit earned around stdin EOF is kept: the session does not
// turn it into 0.
func TestStdinEOFKeepsNonzeroExit(t *testing.T) {
	t.Parallel()
	for _, delay := range []string{"0", "0.5"} {
		t.Run("after-"+delay+"s", func(t *testing.T) {
			t.Parallel()
			s := start(t, pid1test.Config{Spec: shell("cat >/dev/null; sleep " + delay + "; exit 3")})
			requireCode(t, s.Wait(waitShort), 3)
		})
	}
}

// A detached setsid grandchild that keeps the peer's stdout open after the
// peer exited makes the run a failure (125) after the completion window,
// and does not survive it.
func TestDetachedGrandchildHoldingStdout(t *testing.T) {
	t.Parallel()
	marks := markerDir(t)
	gc := filepath.Join(marks, "grandchild")
	s := start(t, pid1test.Config{Spec: shell(
		"setsid sh -c 'trap \"\" TERM HUP; echo $$ > " + gc + "; exec sleep 600' & " +
			"while [ ! -s " + gc + " ]; do sleep 0.05; done; echo peer-done; exit 0")})
	r := s.Wait(waitShort)
	requireCode(t, r, 125)
	if !strings.Contains(string(r.Stderr), "ACP supervisor refused at supervision: output-held") {
		t.Fatalf("stderr %q", r.Stderr)
	}
	if string(r.Stdout) != "peer-done\n" {
		t.Fatalf("stdout %q", r.Stdout)
	}
	pid1test.RequireGone(t, s.Namespace(), waitShort)
}

// Output that cannot be delivered (the reader of fd 1 went away) ends the
// run with 125, never with the peer's code.
func TestBrokenOutputPipe(t *testing.T) {
	t.Parallel()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, pid1test.Config{StdoutFile: pw, KeepStdinOpen: true,
		Spec: shell("trap '' PIPE; while :; do echo line; done; exit 0")})
	pw.Close()
	// Read a little, so the stream is known to flow, then break it.
	if _, err := io.ReadFull(pr, make([]byte, 4096)); err != nil {
		t.Fatalf("no output before the break: %v", err)
	}
	pr.Close()
	r := s.Wait(waitShort)
	requireCode(t, r, 125)
	if !strings.Contains(string(r.Stderr), "ACP supervisor refused at supervision: output-lost") {
		t.Fatalf("stderr %q", r.Stderr)
	}
	pid1test.RequireGone(t, s.Namespace(), waitShort)
}

// Hundreds of orphans are reaped by PID 1: none is left as a zombie (the
// peer counts zombies in the namespace's own /proc).
func TestOrphansAreReaped(t *testing.T) {
	t.Parallel()
	const n = 300
	script := `i=0; while [ $i -lt ` + strconv.Itoa(n) + ` ]; do (sleep 0.2 &); i=$((i+1)); done
tries=0
while :; do
  z=$(grep -l '^State:[[:space:]]*Z' /proc/[0-9]*/status 2>/dev/null | wc -l)
  alive=$(cat /proc/[0-9]*/stat 2>/dev/null | grep -c '(sleep)')
  if [ "$z" -eq 0 ] && [ "$alive" -eq 0 ]; then echo "zombies=0"; exit 0; fi
  tries=$((tries+1)); if [ $tries -gt 900 ]; then echo "zombies=$z sleeping=$alive"; exit 1; fi
  sleep 0.1
done`
	s := start(t, pid1test.Config{Spec: shell(script), KeepStdinOpen: true})
	r := s.Wait(2 * waitLong)
	requireCode(t, r, 0)
	if string(r.Stdout) != "zombies=0\n" {
		t.Fatalf("stdout %q", r.Stdout)
	}
}
