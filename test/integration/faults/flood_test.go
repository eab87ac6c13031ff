//go:build linux

package faults

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/pid1/pid1test"
	"github.com/loki-sh/loki/internal/testutil"
)

const (
	floodBytes = 64 << 20
	stall      = 10 * time.Second
	rssBound   = 16 << 20
)

// TestStalledReaderKeepsInitSmall: the peer writes 64 MiB to stdout while
// the host does not read for 10 s. loki-init must apply backpressure, not
// buffer: its RSS stays under 16 MiB throughout, the lease keeps it alive,
// and once the reader resumes every byte arrives in order (sha256).
func TestStalledReaderKeepsInitSmall(t *testing.T) {
	blob := filepath.Join(t.TempDir(), "blob")
	want := writeRandom(t, blob, floodBytes)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := pid1test.Start(t, pid1test.Config{
		Binary:        testutil.Binary(t, "loki-init"),
		Spec:          &launch.Spec{Argv: []string{"/bin/cat", blob}, Cwd: "/", Env: map[string]string{"PATH": "/usr/bin:/bin"}},
		StdoutFile:    w,
		KeepStdinOpen: true,
	})
	w.Close() // the init holds the only write end now: EOF when it is done

	// Wait until the flood has filled every buffer on the way (the first
	// byte arrived and the pipe is full), then stall.
	br := bufio.NewReaderSize(r, 1)
	if _, err := br.Peek(1); err != nil {
		t.Fatalf("no output from the peer: %v", err)
	}
	peak := 0
	end := time.Now().Add(stall)
	for time.Now().Before(end) {
		select {
		case <-s.Done():
			t.Fatalf("loki-init exited during the stall: %+v", s.Wait(time.Second))
		case <-time.After(100 * time.Millisecond):
		}
		peak = max(peak, vmRSS(t, s.PID()))
	}
	t.Logf("loki-init peak VmRSS over a %v stall with %d MiB pending: %.1f MiB", stall, floodBytes>>20, float64(peak)/(1<<20))
	if peak > rssBound {
		t.Errorf("loki-init RSS reached %d bytes, bound %d", peak, rssBound)
	}

	h := sha256.New()
	n, err := io.Copy(h, br)
	if err != nil {
		t.Fatalf("read after the stall: %v", err)
	}
	s.CloseStdin()
	res := s.Wait(wait)
	if res.Code != 0 {
		t.Fatalf("loki-init exit %d, stderr %q", res.Code, res.Stderr)
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != floodBytes || got != want {
		t.Fatalf("received %d bytes sha256 %s, want %d bytes %s", n, got, floodBytes, want)
	}
}

// writeRandom writes n random bytes to p and returns their sha256.
func writeRandom(t *testing.T, p string, n int) string {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(f, h), rand.Reader, int64(n)); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// vmRSS reads a process's resident set size in bytes from the host's /proc.
func vmRSS(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0 // exited between two samples: Done reports it
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.Atoi(f[1])
			return kb << 10
		}
	}
	return 0
}
