package pid1

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pump is byte-exact whichever path it takes: splice between pipes, splice
// from a pipe into a file, and read/write where splice is refused (an
// O_APPEND file) or a descriptor is non-blocking.
func TestPumpIsByteExact(t *testing.T) {
	data := make([]byte, 3<<20+12345)
	rand.Read(data)
	cases := []struct {
		name string
		dst  func(t *testing.T) (fd int, read func() []byte)
	}{
		{"pipe to pipe", pipeSink},
		{"pipe to file", fileSink(os.O_WRONLY | os.O_CREATE)},
		{"pipe to append-only file", fileSink(os.O_WRONLY | os.O_CREATE | os.O_APPEND)},
		{"pipe to non-blocking pipe", func(t *testing.T) (int, func() []byte) {
			fd, read := pipeSink(t)
			unix.SetNonblock(fd, true)
			return fd, read
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var src [2]int
			if err := unix.Pipe2(src[:], unix.O_CLOEXEC); err != nil {
				t.Fatal(err)
			}
			go func() {
				writeAll(src[1], data)
				unix.Close(src[1])
			}()
			dst, read := tc.dst(t)
			eof, err := pump(dst, src[0], new(meter))
			unix.Close(src[0])
			unix.Close(dst)
			if !eof || err != nil {
				t.Fatalf("eof=%v err=%v", eof, err)
			}
			if got := read(); !bytes.Equal(got, data) {
				t.Fatalf("got %d bytes, want %d identical", len(got), len(data))
			}
		})
	}
}

// A reader that went away is an error, not an end of file, for both pumps.
func TestPumpsReportBrokenDestination(t *testing.T) {
	pumps := map[string]func(dst, src int) (bool, error){
		"blocking": func(dst, src int) (bool, error) { return pump(dst, src, new(meter)) },
		"polled": func(dst, src int) (bool, error) {
			eof, err, ok := pumpPolled(dst, src, new(meter))
			if !ok {
				t.Fatal("the poller refused a pipe")
			}
			return eof, err
		},
	}
	for name, run := range pumps {
		t.Run(name, func(t *testing.T) {
			var src, dst [2]int
			unix.Pipe2(src[:], unix.O_CLOEXEC)
			unix.Pipe2(dst[:], unix.O_CLOEXEC)
			unix.Close(dst[0])
			go func() {
				writeAll(src[1], []byte("lost"))
				unix.Close(src[1])
			}()
			if eof, err := run(dst[1], src[0]); eof || err == nil {
				t.Fatalf("eof=%v err=%v, want EPIPE", eof, err)
			}
		})
	}
}

func pipeSink(t *testing.T) (int, func() []byte) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	return p[1], drain(p[0], 1<<16)
}

// drain reads fd to its end, size bytes a read, on a goroutine, closes it
// and returns what it read when asked.
func drain(fd, size int) func() []byte {
	got := make(chan []byte, 1)
	go func() {
		var buf bytes.Buffer
		b := make([]byte, size)
		for {
			n, err := unix.Read(fd, b)
			if n <= 0 || err != nil {
				break
			}
			buf.Write(b[:n])
		}
		unix.Close(fd)
		got <- buf.Bytes()
	}()
	return func() []byte { return <-got }
}

func fileSink(flags int) func(t *testing.T) (int, func() []byte) {
	return func(t *testing.T) (int, func() []byte) {
		path := filepath.Join(t.TempDir(), "out")
		f, err := os.OpenFile(path, flags, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		fd, err := unix.Dup(int(f.Fd()))
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		return fd, func() []byte { b, _ := os.ReadFile(path); return b }
	}
}

// The poller-driven pump is byte-exact through both of its waits: the
// peer's pipe running dry (small writes with pauses) and the host's pipe
// full (a slow reader behind a one-page pipe). It leaves the peer's
// descriptor open: the loop owns it until the init exits.
func TestPumpPolledIsByteExactThroughBothWaits(t *testing.T) {
	data := make([]byte, 2<<20+777)
	rand.Read(data)
	var src [2]int
	if err := unix.Pipe2(src[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	go writePaced(src[1], data)
	dst, read := pipeSink(t)
	unix.FcntlInt(uintptr(dst), unix.F_SETPIPE_SZ, 4096) // full after one page
	eof, err, ok := pumpPolled(dst, src[0], new(meter))
	unix.Close(dst)
	if !ok || !eof || err != nil {
		t.Fatalf("ok=%v eof=%v err=%v", ok, eof, err)
	}
	if got := read(); !bytes.Equal(got, data) {
		t.Fatalf("got %d bytes, want %d identical", len(got), len(data))
	}
	runtime.GC() // a finalizer closing src would run now
	if _, err := unix.FcntlInt(uintptr(src[0]), unix.F_GETFD, 0); err != nil {
		t.Fatalf("the peer's pipe was closed under the loop: %v", err)
	}
	unix.Close(src[0])
}

// A polled pump puts the init's threads under SCHED_BATCH once it has
// moved batchAfter bytes, and not for a short answer: the switch costs a
// /proc scan a peer that prints a line and exits would wait for. Every
// thread of the process is SCHED_BATCH after the long stream.
func TestPolledPumpBatchesThreadsOnlyForAStream(t *testing.T) {
	real := batchProcess
	defer func() { batchProcess = real }()
	calls := 0
	batchProcess = func() { calls++ }
	stream := func(n int) {
		t.Helper()
		var src [2]int
		if err := unix.Pipe2(src[:], unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		go func() {
			writeAll(src[1], make([]byte, n))
			unix.Close(src[1])
		}()
		dst, read := pipeSink(t)
		eof, err, ok := pumpPolled(dst, src[0], new(meter))
		unix.Close(dst)
		unix.Close(src[0])
		if got := len(read()); !ok || !eof || err != nil || got != n {
			t.Fatalf("ok=%v eof=%v err=%v, %d of %d bytes", ok, eof, err, got, n)
		}
	}
	stream(batchAfter - 1)
	if calls != 0 {
		t.Fatalf("%d bytes switched the policy", batchAfter-1)
	}
	batchProcess = func() { calls++; real() }
	stream(batchAfter + 4096)
	if calls != 1 {
		t.Fatalf("a %d-byte stream switched the policy %d times, want once", batchAfter+4096, calls)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		attr, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			continue // the thread exited
		}
		if attr.Policy != unix.SCHED_BATCH {
			t.Errorf("thread %d: policy %d, want SCHED_BATCH", tid, attr.Policy)
		}
	}
}

// Two forwarders into one regular-file description (`> log 2>&1`): each
// line lands once, where the shared offset is when it is written. A
// splice would write at the offset it read before waiting for the peer,
// so the later stream overwrote the earlier one's lines.
func TestForwardSharedFileDescription(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := int(f.Fd())
	errFD, err := unix.Dup(out) // fd 2 of `2>&1`: the same description
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(errFD)
	var outP, errP [2]int
	unix.Pipe2(outP[:], unix.O_CLOEXEC)
	unix.Pipe2(errP[:], unix.O_CLOEXEC)
	done := make(chan forwarded, 2)
	go forward(streamOut, out, outP[0], done)
	go forward(streamErr, errFD, errP[0], done)
	var want bytes.Buffer
	for i := 0; i < 6; i++ {
		w, name := outP[1], "out-"
		if i%2 == 1 {
			w, name = errP[1], "err-"
		}
		line := name + strconv.Itoa(i) + "\n"
		writeAll(w, []byte(line))
		want.WriteString(line)
		// The line is in the file before the next one is written.
		deadline := time.Now().Add(30 * time.Second)
		for {
			if fi, _ := f.Stat(); fi.Size() >= int64(want.Len()) || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	unix.Close(outP[1])
	unix.Close(errP[1])
	for i := 0; i < 2; i++ {
		if r := <-done; !r.eof || r.err != nil {
			t.Fatalf("forwarder %v: eof=%v err=%v", r.s, r.eof, r.err)
		}
	}
	got, _ := os.ReadFile(f.Name())
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("file holds %q, want %q", got, want.Bytes())
	}
}

// writePaced writes data into fd 4 KiB at a time, as a peer does, with
// pauses that let a pump park on an empty pipe, then closes fd.
func writePaced(fd int, data []byte) {
	for off := 0; off < len(data); off += 4096 {
		writeAll(fd, data[off:min(off+4096, len(data))])
		if off%(256<<10) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	unix.Close(fd)
}

// Into a destination that is not a pipe the polled pump is byte-exact
// too: a file (appended or not, read/write), a socket (splice; left
// non-blocking, or blocking behind a small buffer, so the pump waits for
// it), /dev/null. It parks on the peer's pipe between writes instead of
// blocking a thread in read or splice.
func TestPumpPolledIsByteExactIntoNonPipes(t *testing.T) {
	data := make([]byte, 2<<20+4321)
	rand.Read(data)
	socketSink := func(nonblock bool) func(t *testing.T) (int, func() []byte) {
		return func(t *testing.T) (int, func() []byte) {
			sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			unix.SetsockoptInt(sp[0], unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
			unix.SetNonblock(sp[0], nonblock)
			return sp[0], drain(sp[1], 1000)
		}
	}
	cases := []struct {
		name string
		dst  func(t *testing.T) (fd int, read func() []byte)
	}{
		{"file", fileSink(os.O_WRONLY | os.O_CREATE)},
		{"append-only file", fileSink(os.O_WRONLY | os.O_CREATE | os.O_APPEND)},
		{"socket", socketSink(false)},
		{"non-blocking socket", socketSink(true)},
		{"/dev/null", func(t *testing.T) (int, func() []byte) {
			fd, err := unix.Open(os.DevNull, unix.O_WRONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			return fd, nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var src [2]int
			if err := unix.Pipe2(src[:], unix.O_CLOEXEC); err != nil {
				t.Fatal(err)
			}
			go writePaced(src[1], data)
			dst, read := tc.dst(t)
			m := new(meter)
			eof, err, ok := pumpPolled(dst, src[0], m)
			unix.Close(src[0])
			unix.Close(dst)
			if !ok || !eof || err != nil {
				t.Fatalf("ok=%v eof=%v err=%v", ok, eof, err)
			}
			if m.total() != int64(len(data)) {
				t.Fatalf("metered %d bytes, want %d", m.total(), len(data))
			}
			if read == nil {
				return
			}
			if got := read(); !bytes.Equal(got, data) {
				t.Fatalf("got %d bytes, want %d identical", len(got), len(data))
			}
		})
	}
}
