//go:build linux

// Command splicehop is initbench's plain forwarder: it copies its stdin
// pipe to its stdout pipe with blocking splice(2) on one locked thread,
// with 1 MiB pipes, and does nothing else (no lease, no reaping, no
// scheduling policy). loki-init must own the peer's pipes, so its output
// crosses one more pipe and one more process than a pass-through init's;
// this hop, measured in the same run, shows what a straightforward
// forwarder pays for that extra hop, beside what loki-init pays.
package main

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

const chunk = 1 << 20

func main() {
	runtime.LockOSThread()
	for _, fd := range []int{0, 1} {
		unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, chunk) // best effort
	}
	for {
		n, err := unix.Splice(0, nil, 1, nil, chunk, unix.SPLICE_F_MOVE)
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
