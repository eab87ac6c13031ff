package pid1

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/lease"
	"github.com/loki-sh/loki/internal/testutil"
)

func event(mask uint32, name string) []byte {
	n := len(name)
	if n > 0 {
		n = (n + 1 + 15) / 16 * 16
	}
	b := make([]byte, unix.SizeofInotifyEvent+n)
	binary.NativeEndian.PutUint32(b[4:], mask)
	binary.NativeEndian.PutUint32(b[12:], uint32(n))
	copy(b[unix.SizeofInotifyEvent:], name)
	return b
}

func TestScanEvents(t *testing.T) {
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	cases := []struct {
		name                  string
		batch                 []byte
		hit, resized, ignored bool
	}{
		{"temp file only", event(unix.IN_CLOSE_WRITE, ".lease-123"), false, false, false},
		{"rename onto lease", cat(event(unix.IN_CLOSE_WRITE, ".lease-1"), event(unix.IN_MOVED_TO, "lease")), true, false, false},
		{"similar name", event(unix.IN_MOVED_TO, "lease.bak"), false, false, false},
		{"rename onto winsize", event(unix.IN_MOVED_TO, "winsize"), false, true, false},
		{"lease and winsize", cat(event(unix.IN_MOVED_TO, "winsize"), event(unix.IN_MOVED_TO, "lease")), true, true, false},
		{"overflow", event(unix.IN_Q_OVERFLOW, ""), true, true, false},
		{"watch removed", event(unix.IN_IGNORED, ""), false, false, true},
		{"torn batch", event(unix.IN_MOVED_TO, "lease")[:20], true, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hit, resized, ignored := scanEvents(tc.batch)
			if hit != tc.hit || resized != tc.resized || ignored != tc.ignored {
				t.Fatalf("hit=%v resized=%v ignored=%v, want %v %v %v", hit, resized, ignored, tc.hit, tc.resized, tc.ignored)
			}
		})
	}
}

// Renewals made by the host through its own path reach a watch set up on a
// read-only bind mount of the control dir (what a runtime gives the init).
func TestWatchDirThroughReadOnlyBindMount(t *testing.T) {
	testutil.RequireRoot(t)
	host := t.TempDir()
	inside := t.TempDir()
	w, err := lease.NewWriter(host)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		events <-chan struct{}
		err    error
	}
	done := make(chan result)
	go func() {
		// This thread gets a private mount namespace and is never given
		// back to the scheduler (the goroutine ends locked), so the mount
		// is not seen by the rest of the test process.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			done <- result{err: err}
			return
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			done <- result{err: err}
			return
		}
		if err := unix.Mount(host, inside, "", unix.MS_BIND, ""); err != nil {
			done <- result{err: err}
			return
		}
		if err := unix.Mount("", inside, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			done <- result{err: err}
			return
		}
		if err := os.WriteFile(filepath.Join(inside, "probe"), nil, 0o600); err == nil {
			done <- result{err: os.ErrInvalid}
			return
		}
		w := watchDir(inside)
		var events chan struct{}
		if w.ok() {
			events = make(chan struct{}, 1)
			w.start(func() { wake(events) })
		}
		done <- result{events: events}
	}()
	r := <-done
	if r.err != nil {
		if testutil.InCI() {
			t.Fatalf("cannot set up a read-only bind mount: %v", r.err)
		}
		t.Skipf("cannot set up a read-only bind mount here: %v", r.err)
	}
	if r.events == nil {
		t.Fatal("inotify unavailable on the read-only bind mount")
	}
	for i := 0; i < 3; i++ {
		if err := w.Renew(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-r.events:
		case <-time.After(10 * time.Second):
			t.Fatalf("renewal %d not reported through the read-only mount", i)
		}
	}
}
