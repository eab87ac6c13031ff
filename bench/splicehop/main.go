//go:build linux

// Command splicehop is initbench's plain forwarder: it copies its stdin
// pipe to its stdout pipe with blocking splice(2) on one locked thread,
// with 1 MiB pipes, and does nothing else (no lease, no reaping, no
// scheduling policy). loki-init must own the peer's pipes, so its output
// crosses one more pipe and one more process than a pass-through init's;
// this hop, measured in the same run, shows what a straightforward
// forwarder pays for that extra hop, beside what loki-init pays. With
// -copy it forwards by read(2) and write(2) instead (bench/hopcost.sh:
// what draining the peer's pipe by copy rather than by splice costs the
// peer).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

const chunk = 1 << 20

func main() {
	copying := flag.Bool("copy", false, "forward with read/write (256 KiB buffer) instead of splice")
	flag.Parse()
	runtime.LockOSThread()
	for _, fd := range []int{0, 1} {
		unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, chunk) // best effort
	}
	move := spliceOnce
	if *copying {
		buf := make([]byte, 256<<10)
		move = func() (int, error) { return copyOnce(buf) }
	}
	for {
		n, err := move()
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			fmt.Fprintln(os.Stderr, "splicehop:", err)
			os.Exit(1)
		case n == 0:
			return
		}
	}
}

func spliceOnce() (int, error) {
	n, err := unix.Splice(0, nil, 1, nil, chunk, unix.SPLICE_F_MOVE)
	return int(n), err
}

// copyOnce moves one read's worth; a short write is an error (stdout is a
// blocking pipe, which writes in full or fails).
func copyOnce(buf []byte) (int, error) {
	n, err := unix.Read(0, buf)
	if err != nil || n == 0 {
		return n, err
	}
	m, err := unix.Write(1, buf[:n])
	if err == nil && m != n {
		err = fmt.Errorf("short write %d of %d", m, n)
	}
	return n, err
}
