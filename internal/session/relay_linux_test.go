package session

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFeed: the prelude and then the source arrive byte-exact and in
// order, whatever the source is (a blocking pipe or a regular file: read
// and write, then splice once a read fills the buffer; a non-blocking
// pipe: the fallback), and EOF closes the pipe.
func TestFeed(t *testing.T) {
	payload := make([]byte, 3<<20+17)
	rand.Read(payload)
	prelude := []byte("\x00\x00\x00\x02{}")
	sources := []struct {
		name string
		open func(t *testing.T) *os.File
	}{
		{"blocking pipe", func(t *testing.T) *os.File { return pipeWith(t, payload, false) }},
		{"non-blocking pipe", func(t *testing.T) *os.File { return pipeWith(t, payload, true) }},
		{"regular file", func(t *testing.T) *os.File {
			p := filepath.Join(t.TempDir(), "in")
			os.WriteFile(p, payload, 0o600)
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}},
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			r, w, err := newStdinPipe(-1)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			in := src.open(t)
			defer in.Close()
			done := make(chan error, 1)
			go feed(w, prelude, in, done, nil, newOutcome(nil))
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("feed: %v", err)
			}
			want := append(append([]byte{}, prelude...), payload...)
			if !bytes.Equal(got, want) {
				t.Fatalf("got %d bytes, want %d (byte-exact)", len(got), len(want))
			}
		})
	}
}

// pipeWith returns the read end of a pipe that a goroutine fills with b
// and then closes.
func pipeWith(t *testing.T, b []byte, nonblock bool) *os.File {
	t.Helper()
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	if nonblock {
		syscall.SetNonblock(p[0], true)
	}
	w := os.NewFile(uintptr(p[1]), "w")
	go func() { w.Write(b); w.Close() }()
	return os.NewFile(uintptr(p[0]), "r")
}

// TestFeedReaderGone: when the init (or the peer) stops reading, the feed
// ends without error and without blocking: what was not read is the
// reader's choice, not lost output.
func TestFeedReaderGone(t *testing.T) {
	r, w, err := newStdinPipe(-1)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	src := pipeWith(t, make([]byte, 8<<20), false)
	defer src.Close()
	done := make(chan error, 1)
	go feed(w, []byte("prelude"), src, done, nil, newOutcome(nil))
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("feed to a closed reader: %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("feed did not end after the reader went away")
	}
}

// TestFeedReadError: a source that fails is reported, not taken for EOF.
func TestFeedReadError(t *testing.T) {
	r, w, err := newStdinPipe(-1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dir, err := os.Open(t.TempDir()) // reading a directory fails (EISDIR)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	done := make(chan error, 1)
	go feed(w, []byte("p"), dir, done, nil, newOutcome(nil))
	go io.Copy(io.Discard, r)
	select {
	case err := <-done:
		if err == nil || errors.Is(err, syscall.EPIPE) {
			t.Fatalf("feed from an unreadable source: %v, want an error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("feed did not end")
	}
}
