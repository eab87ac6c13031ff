//go:build linux

// Command rttbench measures what an ACP client feels through a stdio
// path: one JSON-RPC-sized line written to the command's stdin and read
// back from its stdout (the command is an echo such as cat), N times in a
// row, and the time from spawn to the first echo. Variants are given as
// NAME=COMMAND (run by sh -c) and measured round-robin, R rounds, so load
// on a shared machine touches every variant alike; each row pools its
// rounds' samples: p50, p99 and max round trip, the median first echo
// (of every spawn: the measured ones and -starts more per round, which
// only wait for the first echo), and ratios to the variant named by -base.
//
// The client side is the same for every variant and kept thin: blocking
// pipes read and written with plain system calls on one locked thread (no
// runtime poller in the measured path).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

type variant struct {
	name, cmd string
	rtts      []time.Duration
	firsts    []time.Duration
}

func main() {
	n := flag.Int("n", 3000, "round trips per run")
	rounds := flag.Int("r", 3, "rounds (every variant once per round)")
	size := flag.Int("size", 230, "bytes per line, newline included")
	base := flag.String("base", "", "variant the ratios are taken against (default: the first)")
	starts := flag.Int("starts", 10, "extra spawns per round that only time the first echo")
	flag.Parse()
	runtime.LockOSThread()
	var vs []*variant
	for _, a := range flag.Args() {
		name, cmd, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "rttbench: %q: want NAME=COMMAND\n", a)
			os.Exit(2)
		}
		vs = append(vs, &variant{name: name, cmd: cmd})
	}
	if len(vs) == 0 {
		fmt.Fprintln(os.Stderr, "usage: rttbench [-n N] [-r R] [-starts K] [-base NAME] NAME=COMMAND...")
		os.Exit(2)
	}
	line := message(*size)
	for r := 0; r < *rounds; r++ {
		for _, v := range vs {
			first, rtts, err := runOnce(v.cmd, line, *n)
			if err != nil {
				fmt.Fprintf(os.Stderr, "rttbench: %s: %v\n", v.name, err)
				os.Exit(1)
			}
			v.firsts = append(v.firsts, first)
			v.rtts = append(v.rtts, rtts...)
			for range *starts {
				first, _, err := runOnce(v.cmd, line, 0)
				if err != nil {
					fmt.Fprintf(os.Stderr, "rttbench: %s: %v\n", v.name, err)
					os.Exit(1)
				}
				v.firsts = append(v.firsts, first)
			}
		}
	}
	ref := vs[0]
	for _, v := range vs {
		if v.name == *base {
			ref = v
		}
	}
	rp50, rp99, _ := stats(ref.rtts)
	rfirst := median(ref.firsts)
	fmt.Printf("%-28s %9s %9s %9s %10s   %s\n", "path", "p50", "p99", "max", "first echo", "ratios to "+ref.name+" (p50 / p99 / first)")
	for _, v := range vs {
		p50, p99, max := stats(v.rtts)
		first := median(v.firsts)
		fmt.Printf("%-28s %9s %9s %9s %10s   %5.2fx / %5.2fx / %5.2fx\n", v.name, us(p50), us(p99), us(max), ms(first),
			float64(p50)/float64(rp50), float64(p99)/float64(rp99), float64(first)/float64(rfirst))
	}
}

// message is a JSON-RPC notification padded to size bytes, newline last.
func message(size int) []byte {
	head := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"bench","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`
	tail := `"}}}}`
	pad := size - len(head) - len(tail) - 1
	if pad < 0 {
		pad = 0
	}
	return []byte(head + strings.Repeat("x", pad) + tail + "\n")
}

// runOnce spawns cmd, measures spawn to first echo, then n round trips,
// then closes stdin and waits for it.
func runOnce(cmd string, line []byte, n int) (time.Duration, []time.Duration, error) {
	var in, out [2]int
	if err := unix.Pipe2(in[:], unix.O_CLOEXEC); err != nil {
		return 0, nil, err
	}
	if err := unix.Pipe2(out[:], unix.O_CLOEXEC); err != nil {
		return 0, nil, err
	}
	stdin, stdout := os.NewFile(uintptr(in[0]), "stdin"), os.NewFile(uintptr(out[1]), "stdout")
	c := exec.Command("sh", "-c", cmd)
	c.Stdin, c.Stdout, c.Stderr = stdin, stdout, os.Stderr
	start := time.Now()
	if err := c.Start(); err != nil {
		return 0, nil, err
	}
	stdin.Close()
	stdout.Close()
	w, r := in[1], out[0]
	defer unix.Close(r)
	buf := make([]byte, 64<<10)
	var pending []byte
	echo := func() error {
		if err := writeAll(w, line); err != nil {
			return err
		}
		for {
			if i := bytes.IndexByte(pending, '\n'); i >= 0 {
				if !bytes.Equal(pending[:i+1], line) {
					return fmt.Errorf("echo differs from the line sent")
				}
				pending = pending[i+1:]
				return nil
			}
			k, err := unix.Read(r, buf)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				return err
			}
			if k == 0 {
				return fmt.Errorf("stdout closed before the echo")
			}
			pending = append(pending, buf[:k]...)
		}
	}
	if err := echo(); err != nil {
		unix.Close(w)
		c.Wait()
		return 0, nil, err
	}
	first := time.Since(start)
	rtts := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t := time.Now()
		if err := echo(); err != nil {
			unix.Close(w)
			c.Wait()
			return 0, nil, err
		}
		rtts = append(rtts, time.Since(t))
	}
	unix.Close(w)
	if err := c.Wait(); err != nil {
		return 0, nil, fmt.Errorf("exit: %w", err)
	}
	return first, rtts, nil
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		k, err := unix.Write(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[k:]
	}
	return nil
}

func stats(d []time.Duration) (p50, p99, max time.Duration) {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2], s[len(s)*99/100], s[len(s)-1]
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func us(d time.Duration) string { return fmt.Sprintf("%.0fµs", float64(d)/1e3) }
func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/1e6) }
