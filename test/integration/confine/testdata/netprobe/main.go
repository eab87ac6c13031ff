// Command netprobe runs inside a session and reports what network it
// reaches: netprobe TCP_PORT UDP_PORT, the ports of the host's listeners
// on 127.0.0.1; netprobe unix PATH... (an abstract name starts with @),
// which unix sockets answer; netprobe key NAME, whether the host's user
// keyring key NAME can be read; netprobe shm KEY, whether the host's SysV
// shared memory segment KEY is there.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "shm" {
		// SysV IPC: is the host's shared memory segment KEY reachable?
		key, _ := strconv.Atoi(os.Args[2])
		state := "absent"
		if _, err := unix.SysvShmGet(key, 0, 0); err == nil {
			state = "found"
		}
		fmt.Printf("shm=%s\n", state)
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "key" {
		// keyring: can the peer find and read the host's key named $2?
		state := "refused"
		id, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", os.Args[2], 0)
		if err == nil {
			buf := make([]byte, 64)
			if n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0); err == nil {
				state = "read:" + string(buf[:n])
			}
		}
		// Why a search failed: EPERM from a seccomp filter, or ENOKEY
		// where the runtime gave the peer a keyring of its own.
		if errno, ok := err.(unix.Errno); ok {
			fmt.Printf("keyerr=%s\n", unix.ErrnoName(errno))
		}
		fmt.Printf("key=%s\n", state)
		return
	}
	if len(os.Args) > 2 && os.Args[1] == "unix" {
		for i, path := range os.Args[2:] {
			state := "refused"
			if c, err := net.DialTimeout("unix", path, 2*time.Second); err == nil {
				state = "connected"
				c.Close()
			}
			fmt.Printf("unix%d=%s\n", i, state)
		}
		return
	}
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: netprobe TCP_PORT UDP_PORT")
		os.Exit(2)
	}
	hostTCP := "refused"
	if c, err := net.DialTimeout("tcp4", "127.0.0.1:"+os.Args[1], 2*time.Second); err == nil {
		hostTCP = "connected"
		c.Close()
	}
	fmt.Printf("host_tcp=%s\n", hostTCP)
	// A DNS query is a datagram like this one.
	if c, err := net.Dial("udp4", "127.0.0.1:"+os.Args[2]); err == nil {
		c.Write([]byte("query"))
		c.Close()
	}
	fmt.Printf("self=%s\n", selfTalk())
}

// selfTalk: a listener of the peer's own on 127.0.0.1, and a round trip
// through it.
func selfTalk() string {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return "refused"
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Write([]byte("pong"))
			c.Close()
		}
	}()
	c, err := net.DialTimeout("tcp4", l.Addr().String(), 2*time.Second)
	if err != nil {
		return "refused"
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil || string(b) != "pong" {
		return "refused"
	}
	return "ok"
}
