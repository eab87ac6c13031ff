package pid1

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func expectNone(t *testing.T, ch <-chan forwarded, why string) {
	t.Helper()
	select {
	case f := <-ch:
		t.Fatalf("%s: reported %+v", why, f)
	case <-time.After(100 * time.Millisecond):
	}
}

func expect(t *testing.T, ch <-chan forwarded, want forwarded) {
	t.Helper()
	select {
	case f := <-ch:
		if f != want {
			t.Fatalf("reported %+v, want %+v", f, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%+v never reported", want)
	}
}

// The hang-up watch takes pipes and sockets into its epoll set, reports
// stdin's hang-up once and a vanished output reader, and nothing for the
// data that crosses stdin meanwhile.
func TestWatchDirectReportsHangupsOnly(t *testing.T) {
	var in, out [2]int
	if err := unix.Pipe2(in[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	if err := unix.Pipe2(out[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(in[0])
	defer unix.Close(out[1])
	if _, f, ok := hangupSet(in[0], []int{out[1]}); !ok {
		t.Fatal("epoll refused a pipe: the watch fell back to a blocking poll")
	} else {
		f.Close()
	}
	ch := make(chan forwarded, 3)
	watchDirect(in[0], []int{out[1]}, ch)
	for range 50 {
		unix.Write(in[1], []byte("{\"jsonrpc\":\"2.0\"}\n"))
	}
	expectNone(t, ch, "data into stdin")
	unix.Close(in[1])
	expect(t, ch, forwarded{s: streamIn, eof: true})
	expectNone(t, ch, "stdin after its hang-up")
	unix.Close(out[0])
	expect(t, ch, forwarded{s: streamOut, err: unix.EPIPE})
}

// A socket's half-close (EPOLLRDHUP) is host stdin's end, as a full close.
func TestWatchDirectSocketHalfClose(t *testing.T) {
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sp[0])
	defer unix.Close(sp[1])
	ch := make(chan forwarded, 1)
	watchDirect(sp[0], nil, ch)
	unix.Write(sp[1], []byte("hello\n"))
	expectNone(t, ch, "data into stdin")
	unix.Shutdown(sp[1], unix.SHUT_WR)
	expect(t, ch, forwarded{s: streamIn, eof: true})
}

// What epoll refuses (a regular file) is watched by the blocking poll.
func TestWatchDirectFallsBackForFiles(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ep, ok := hangupSet(int(f.Fd()), nil); ok {
		ep.Close()
		t.Fatal("epoll took a regular file")
	}
}
