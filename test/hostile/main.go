// Command hostile is a hostile session peer for the conformance suite and
// the benchmarks: it attacks what the supervisor serves the session and
// prints what came back as key=value lines.
//
//	hostile egress          attack the egress proxy named by $HTTP_PROXY
//	hostile plant DIR       leave a set-uid/set-gid file or a file capability
//	                        in DIR, every way the syscall policy covers
//	hostile surface         reach io_uring, userfaultfd, perf events
//	hostile sockets PATH... connect to each unix socket, then again while
//	                        the host re-creates them (polled for 3 s)
//	hostile deny N          make the policy's denied calls (keyctl N times),
//	                        print how each was answered and the pid, hold
//	hostile deny-watch      call keyctl every 10 ms, print each new answer
//
// It waits for a line on stdin at each "hold" line it prints, so that the
// caller can measure the supervisor while the attack's connections are
// open, and once more after "done".
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The attack's size: the figures of issue 33.
const (
	headerBytes   = 128 << 20 // one unterminated request header
	headerClients = 3         // sent in parallel
	idleConns     = 1500      // connections that never send a byte
	refusedHosts  = 300       // distinct names not on the allowlist
)

func main() {
	switch {
	case len(os.Args) == 3 && os.Args[1] == "plant":
		plant(os.Args[2])
		return
	case len(os.Args) == 2 && os.Args[1] == "surface":
		surface()
		return
	case len(os.Args) > 2 && os.Args[1] == "sockets":
		sockets(os.Args[2:])
		return
	case len(os.Args) == 3 && os.Args[1] == "deny":
		n, err := strconv.Atoi(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "hostile: deny N")
			os.Exit(2)
		}
		deny(n)
		fmt.Println("hold=done")
		bufio.NewReader(os.Stdin).ReadString('\n')
		return
	case len(os.Args) == 2 && os.Args[1] == "deny-watch":
		denyWatch()
		return
	case len(os.Args) != 2 || os.Args[1] != "egress":
		fmt.Fprintln(os.Stderr, "usage: hostile egress | hostile plant DIR | hostile surface | hostile sockets PATH... | hostile deny N | hostile deny-watch")
		os.Exit(2)
	}
	u, err := url.Parse(os.Getenv("HTTP_PROXY"))
	if err != nil || u.Host == "" {
		fmt.Fprintln(os.Stderr, "hostile: no HTTP_PROXY")
		os.Exit(2)
	}
	stdin := bufio.NewReader(os.Stdin)
	hold := func(what string) {
		fmt.Println("hold=" + what)
		stdin.ReadString('\n')
	}
	proxy := u.Host
	fmt.Println("headers=" + headers(proxy))
	open, answered := idle(proxy, hold)
	fmt.Printf("idle_open=%d\nidle_answered=%s\n", open, answered)
	fmt.Printf("refused=%s\n", refused(proxy))
	hold("done")
}

// headers sends headerClients endless headers at once and returns how
// each ended: the status the proxy answered, or the error.
func headers(proxy string) string {
	out := make([]string, headerClients)
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = endlessHeader(proxy)
		}()
	}
	wg.Wait()
	return strings.Join(out, ",")
}

func endlessHeader(proxy string) string {
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		return "dial-error"
	}
	defer c.Close()
	status := make(chan string, 1)
	go func() { status <- readStatus(c, 60*time.Second) }()
	fmt.Fprintf(c, "GET http://example.invalid/ HTTP/1.1\r\nHost: example.invalid\r\nX-Fill: ")
	chunk := bytes.Repeat([]byte("a"), 64<<10)
	for sent := 0; sent < headerBytes; sent += len(chunk) {
		if _, err := c.Write(chunk); err != nil {
			break // the proxy stopped reading: its answer tells why
		}
	}
	return <-status
}

// readStatus reads the status code of an HTTP answer on c.
func readStatus(c net.Conn, timeout time.Duration) string {
	c.SetReadDeadline(time.Now().Add(timeout))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return "timeout"
		}
		return "closed"
	}
	resp.Body.Close()
	return fmt.Sprint(resp.StatusCode)
}

// idle opens idleConns connections that send nothing, holds them while
// the caller looks, and counts the answers they got meanwhile.
func idle(proxy string, hold func(string)) (int, string) {
	var conns []net.Conn
	for range idleConns {
		c, err := net.DialTimeout("tcp", proxy, 5*time.Second)
		if err != nil {
			break
		}
		conns = append(conns, c)
	}
	hold("idle")
	counts := map[string]int{}
	for _, c := range conns {
		counts[readStatus(c, 10*time.Millisecond)]++
		c.Close()
	}
	var parts []string
	for _, k := range []string{"503", "400", "timeout", "closed"} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", k, counts[k]))
		}
	}
	return len(conns), strings.Join(parts, ",")
}

// refused asks for refusedHosts names the allowlist does not have and
// counts the answers.
func refused(proxy string) string {
	counts := map[string]int{}
	for i := range refusedHosts {
		c, err := net.Dial("tcp", proxy)
		if err != nil {
			counts["dial-error"]++
			continue
		}
		fmt.Fprintf(c, "CONNECT refused-%d.invalid:443 HTTP/1.1\r\n\r\n", i)
		counts[readStatus(c, 10*time.Second)]++
		c.Close()
	}
	var parts []string
	for k, n := range counts {
		parts = append(parts, fmt.Sprintf("%s:%d", k, n))
	}
	return strings.Join(parts, ",")
}

// sockets prints before_N=STATUS for each path, holds while the host
// re-creates or adds them, then polls each for 3 s and prints after_N:
// "connected" as soon as one connect worked, else the last failure.
func sockets(paths []string) {
	stdin := bufio.NewReader(os.Stdin)
	for i, p := range paths {
		fmt.Printf("before_%d=%s\n", i, dialUnix(p))
	}
	fmt.Println("hold=sockets")
	stdin.ReadString('\n')
	last := make([]string, len(paths))
	deadline := time.Now().Add(3 * time.Second)
	for {
		pending := false
		for i, p := range paths {
			if last[i] != "connected" {
				last[i] = dialUnix(p)
				pending = pending || last[i] != "connected"
			}
		}
		if !pending || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := range paths {
		fmt.Printf("after_%d=%s\n", i, last[i])
	}
	fmt.Println("hold=done")
	stdin.ReadString('\n')
}

// dialUnix: connected, absent (no such file), or refused (any other
// failure: a mask, a dead socket, permissions).
func dialUnix(path string) string {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return "connected"
	}
	if os.IsNotExist(err) || strings.Contains(err.Error(), "no such file") {
		return "absent"
	}
	return "refused"
}
