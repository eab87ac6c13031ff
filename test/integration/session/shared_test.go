//go:build linux

package session

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
	"golang.org/x/sys/unix"
)

// sharedLines is how many lines the peer writes to each stream in a burst.
const sharedLines = 300

// sharedScript: a paced part whose global order is fixed (the issue's
// `> log 2>&1` reproduction), then sharedLines lines to each stream as
// fast as the shell goes, interleaved.
var sharedScript = fmt.Sprintf(`for i in 1 2 3; do echo p-out-$i; sleep .1; echo p-err-$i >&2; sleep .1; done
i=0; while [ $i -lt %d ]; do echo out-$i; echo err-$i >&2; i=$((i+1)); done`, sharedLines)

// destination is where a session's stdout and stderr both go, through one
// open file description (as the shell does for `> dst 2>&1`).
type destination struct {
	name string
	// open returns the file to hand over as both stdout and stderr and a
	// function that, after the session ended, returns what reached it.
	open func(t *testing.T) (*os.File, func() []byte)
}

func destinations() []destination {
	file := func(flags int) func(t *testing.T) (*os.File, func() []byte) {
		return func(t *testing.T) (*os.File, func() []byte) {
			p := filepath.Join(t.TempDir(), "log")
			if flags&os.O_APPEND != 0 {
				os.WriteFile(p, []byte("kept\n"), 0o600)
			}
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|flags, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			return f, func() []byte {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if flags&os.O_APPEND != 0 {
					if !bytes.HasPrefix(b, []byte("kept\n")) {
						t.Errorf("appending destination lost what it held: %q", b[:min(len(b), 64)])
					}
					b = bytes.TrimPrefix(b, []byte("kept\n"))
				}
				return b
			}
		}
	}
	// drained reads the far end of a pipe, socket or pty until EOF.
	drained := func(t *testing.T, r *os.File) func() []byte {
		got := make(chan []byte, 1)
		go func() { b, _ := io.ReadAll(r); got <- b }()
		return func() []byte { return <-got }
	}
	return []destination{
		{"file-truncate", file(os.O_TRUNC)},
		{"file-append", file(os.O_APPEND)},
		{"pipe", func(t *testing.T) (*os.File, func() []byte) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			return w, drained(t, r)
		}},
		{"socket", func(t *testing.T) (*os.File, func() []byte) {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			r := os.NewFile(uintptr(fds[0]), "sock-r")
			t.Cleanup(func() { r.Close() })
			return os.NewFile(uintptr(fds[1]), "sock-w"), drained(t, r)
		}},
		{"tty", func(t *testing.T) (*os.File, func() []byte) {
			master, slave := openPTY(t)
			return slave, func() []byte {
				// A pty master reads EIO once the last slave closed;
				// ReadAll stops there with everything written before.
				b, _ := io.ReadAll(master)
				return b
			}
		}},
		{"devnull", func(t *testing.T) (*os.File, func() []byte) {
			f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			return f, nil
		}},
	}
}

// openPTY opens a pseudo-terminal pair with output post-processing off
// (no \n to \r\n), so what the peer writes is what the master reads.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Oflag &^= unix.OPOST
	tio.Lflag &^= unix.ECHO | unix.ICANON
	if err := unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	return m, s
}

// TestSharedDescription: stdout and stderr sharing one open file
// description, of every kind, through every backend: every line arrives
// exactly once, each stream in order, the paced lines in their global
// order, and nothing else is there. A splice into a regular file used to
// write at an offset read before it waited for the peer, so the streams
// overwrote each other (`> log 2>&1` kept 3 of 5 lines).
func TestSharedDescription(t *testing.T) {
	for _, b := range relayBackends() {
		t.Run(b.Name, func(t *testing.T) {
			for _, d := range destinations() {
				t.Run(d.name, func(t *testing.T) {
					got, code, _ := sessionInto(t, b, d, sharedScript)
					if code != 0 {
						t.Fatalf("exit %d; output %q", code, head(got))
					}
					if got != nil {
						checkShared(t, b, got, nil)
					}
				})
			}
		})
	}
}

// TestSharedDescriptionNotes: the session's own lines (the refusal line for
// a peer killed by a signal) go to the same description as the peer's and
// overwrite none of them.
func TestSharedDescriptionNotes(t *testing.T) {
	for _, b := range relayBackends() {
		t.Run(b.Name, func(t *testing.T) {
			for _, d := range destinations()[:2] {
				t.Run(d.name, func(t *testing.T) {
					got, code, _ := sessionInto(t, b, d, sharedScript+"\nkill -9 $$")
					if code != 125 {
						t.Fatalf("exit %d, want 125; output %q", code, head(got))
					}
					var notes []string
					checkShared(t, b, got, &notes)
					if len(notes) == 0 {
						t.Fatalf("no line of the session's own among the output")
					}
				})
			}
		})
	}
}

// sessionInto runs script as the peer with stdout and stderr both on d and
// returns what reached d (nil for /dev/null), the exit code and nothing on
// a pipe of its own: the supervisor's stderr is d too.
func sessionInto(t *testing.T, b backend, d destination, script string) ([]byte, int, error) {
	t.Helper()
	cmd := supervise(t, b, []string{"--wait-after-eof"}, "sh", "-c", script)
	f, read := d.open(t)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code := testutil.WaitExit(t, cmd, generous)
	if read == nil {
		return nil, code, nil
	}
	return read(), code, nil
}

// checkShared checks the peer's lines in got: the paced ones first and in
// order, then every burst line exactly once, each stream in order. Lines
// that are not the peer's are returned in notes when notes is non-nil
// (they must be whole loki lines), and are an error otherwise. Docker's
// own relay (shim, daemon, client) carries the two streams apart and may
// swap lines 0.1 s apart under load, so there the paced lines are held to
// the order within each stream only.
func checkShared(t *testing.T, b backend, got []byte, notes *[]string) {
	t.Helper()
	if len(got) == 0 || got[len(got)-1] != '\n' {
		t.Fatalf("output does not end with a whole line: %q", tail(got))
	}
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	var peer []string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "p-") || strings.HasPrefix(l, "out-") || strings.HasPrefix(l, "err-"):
			peer = append(peer, l)
		case notes != nil && (strings.HasPrefix(l, "ACP supervisor ") || strings.HasPrefix(l, "loki-supervise: ")):
			*notes = append(*notes, l)
		default:
			t.Fatalf("line %q is neither the peer's nor a whole note; output %q", l, head(got))
		}
	}
	paced := []string{"p-out-1", "p-err-1", "p-out-2", "p-err-2", "p-out-3", "p-err-3"}
	if len(peer) < len(paced) {
		t.Fatalf("peer lines %q, want at least the paced %q", peer, paced)
	}
	gotPaced := peer[:len(paced)]
	if b.Name == "docker" {
		gotPaced = append(byStream(gotPaced, "p-out"), byStream(gotPaced, "p-err")...)
		paced = append(byStream(paced, "p-out"), byStream(paced, "p-err")...)
	}
	if strings.Join(gotPaced, " ") != strings.Join(paced, " ") {
		t.Fatalf("paced lines %q, want %q", gotPaced, paced)
	}
	next := map[string]int{"out": 0, "err": 0}
	for _, l := range peer[len(paced):] {
		s, _, _ := strings.Cut(l, "-")
		if want := fmt.Sprintf("%s-%d", s, next[s]); l != want {
			t.Fatalf("got %q where %q was due (a line lost, repeated or torn)", l, want)
		}
		next[s]++
	}
	if next["out"] != sharedLines || next["err"] != sharedLines {
		t.Fatalf("got %d stdout and %d stderr lines of %d each", next["out"], next["err"], sharedLines)
	}
}

func byStream(lines []string, prefix string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

func head(b []byte) []byte { return b[:min(len(b), 200)] }
func tail(b []byte) []byte { return b[max(0, len(b)-200):] }
