// Command peer is the soak test's agent stand-in, run by loki-init inside a
// session. It speaks a fixed script on its stdio so the test can check
// every byte from both ends:
//
//  1. "ready ID" as soon as it runs (the test's start latency ends at its
//     first byte);
//  2. -rounds request/response round trips: each line read is answered
//     with "echo LINE" at once;
//  3. the bulk phase, both ways at the same time: it hashes -expect bytes
//     of stdin and writes -bytes of pattern -seed to stdout;
//  4. "done ID in=N SHA out=N SHA", the counts and sha256 of what it read
//     and what it wrote;
//  5. it waits for stdin's EOF (any further byte is an error, exit 98) and
//     exits with -exit.
//
// The client closes stdin only after it has the whole answer, as an ACP
// client does: loki-init ends a session whose host stdin reached EOF one
// second later (docs/loki-init.md), so a peer still writing then would be
// cut short.
//
// With -child it first starts a copy of itself that holds no stdio and
// sleeps forever: a process the session's end must take down. With -linger
// it never exits at all: only loki-init can end such a session.
package main

import (
	"bufio"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/loki-sh/loki/test/integration/soak/internal/pattern"
)

type config struct {
	id          string
	seed        uint64
	bytes       int64
	rounds      int
	exit        int
	child       bool
	linger      bool
	expectBytes int64
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-hold" {
		hang() // the background child: holds nothing, never ends
	}
	var c config
	flag.StringVar(&c.id, "id", "", "session id echoed in the first and last line")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the stream written to stdout")
	flag.Int64Var(&c.bytes, "bytes", 0, "bytes written to stdout in the bulk phase")
	flag.Int64Var(&c.expectBytes, "expect", 0, "bytes the bulk phase reads from stdin")
	flag.IntVar(&c.rounds, "rounds", 0, "request/response round trips")
	flag.IntVar(&c.exit, "exit", 0, "exit code")
	flag.BoolVar(&c.child, "child", false, "start a background child that sleeps forever")
	flag.BoolVar(&c.linger, "linger", false, "never exit: drain stdin, then hang")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "peer:", err)
		os.Exit(99)
	}
	os.Exit(c.exit)
}

func run(c config) error {
	if c.child {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find own binary: %w", err)
		}
		// No stdio: a held pipe would make loki-init wait for it.
		if err := exec.Command(self, "-hold").Start(); err != nil {
			return fmt.Errorf("start child: %w", err)
		}
	}
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	if err := say(out, "ready "+c.id); err != nil {
		return err
	}
	if err := rounds(in, out, c.rounds); err != nil {
		return err
	}
	inN, inSum, outN, outSum, err := bulk(in, out, c)
	if err != nil {
		return err
	}
	if err := say(out, fmt.Sprintf("done %s in=%d %x out=%d %x", c.id, inN, inSum, outN, outSum)); err != nil {
		return err
	}
	if c.linger {
		io.Copy(io.Discard, in)
		hang()
	}
	if inN < c.expectBytes {
		return fmt.Errorf("stdin ended after %d of %d bytes", inN, c.expectBytes)
	}
	if extra, err := io.Copy(io.Discard, in); err != nil || extra != 0 {
		fmt.Fprintf(os.Stderr, "peer: %d bytes after the bulk input (%v)\n", extra, err)
		os.Exit(98)
	}
	return nil
}

// hang never returns. A bare select{} would not do: the runtime ends a
// program whose goroutines all block forever ("deadlock"), a sleep it
// does not.
func hang() {
	for {
		time.Sleep(time.Hour)
	}
}

// say writes one line and flushes it: the other end is waiting for it.
func say(w *bufio.Writer, line string) error {
	if _, err := w.WriteString(line + "\n"); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	return nil
}

func rounds(in *bufio.Reader, out *bufio.Writer, n int) error {
	for i := 0; i < n; i++ {
		line, err := in.ReadString('\n')
		if err != nil {
			return fmt.Errorf("round %d: read: %w", i, err)
		}
		if err := say(out, "echo "+strings.TrimSuffix(line, "\n")); err != nil {
			return fmt.Errorf("round %d: %w", i, err)
		}
	}
	return nil
}

// bulk reads -expect bytes of stdin while it writes the pattern, both at
// once: a peer that did one after the other would deadlock on full pipes.
// Input that ends early is counted, not an error: the caller decides.
func bulk(in io.Reader, out *bufio.Writer, c config) (inN int64, inSum []byte, outN int64, outSum []byte, err error) {
	type res struct {
		n   int64
		sum []byte
		err error
	}
	read := make(chan res, 1)
	go func() {
		h := sha256.New()
		n, err := io.CopyN(h, in, c.expectBytes)
		if err == io.EOF {
			err = nil
		}
		read <- res{n, h.Sum(nil), err}
	}()
	h := sha256.New()
	outN, err = io.Copy(io.MultiWriter(out, h), io.LimitReader(pattern.New(c.seed), c.bytes))
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		return 0, nil, 0, nil, fmt.Errorf("bulk write: %w", err)
	}
	r := <-read
	if r.err != nil {
		return 0, nil, 0, nil, fmt.Errorf("bulk read: %w", r.err)
	}
	return r.n, r.sum, outN, h.Sum(nil), nil
}
