//go:build linux

package soak

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/testutil"
	"github.com/loki-sh/loki/test/integration/soak/internal/pattern"
)

// plan is one session to run: what the peer is told to do and, for the
// kill test, after how many received bulk bytes its supervisor dies.
type plan struct {
	id              string
	seedIn, seedOut uint64
	bytes           int64
	rounds          int
	exit            int
	flags           []string // extra loki-supervise session flags
	killAt          int64    // < 0: never killed
	peerFlags       []string
}

// outcome is what one session did, checked by the test afterwards.
type outcome struct {
	plan
	pid              int
	start            time.Time
	latency          time.Duration   // start to the first byte of the peer
	roundTrips       []time.Duration // interactive phase
	code             int
	sentN, recvN     int64
	sentSum, recvSum []byte
	trailer          string
	extra            int64 // bytes after the trailer (must be 0)
	err              error // protocol failure seen by the test
	killedAt         time.Time
	ns               string
	members          []procid.Identity
	stderr           string
	end              time.Time
	gone             time.Duration // kill to the last process of the session gone
	goneErr          error
	initPID          int
	initStatus       string // how the orphaned init ended (kill test)
}

// drive runs one session to its end (or its supervisor's death) and
// reports everything; it never calls t.Fatal, many run at once.
func drive(tl tools, controlRoot string, s *sampler, p plan) (o outcome) {
	o.plan = p
	args := append([]string{"session", "--init", tl.init, "--control-root", controlRoot}, p.flags...)
	args = append(args, "--", tl.peer, "-id", p.id, "-seed", strconv.FormatUint(p.seedOut, 10),
		"-bytes", strconv.FormatInt(p.bytes, 10), "-expect", strconv.FormatInt(p.bytes, 10),
		"-rounds", strconv.Itoa(p.rounds), "-exit", strconv.Itoa(p.exit))
	args = append(args, p.peerFlags...)
	// Our own pipes, not StdoutPipe: Wait must not close the read end
	// under a session whose supervisor was killed, or the init would see
	// lost output and end early instead of by the lease.
	inR, inW, err := os.Pipe()
	if err != nil {
		o.err = fmt.Errorf("stdin pipe: %w", err)
		return o
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		o.err = fmt.Errorf("stdout pipe: %w", err)
		return o
	}
	defer inW.Close()
	defer outR.Close()
	stderr := &capped{n: 4096}
	cmd := exec.Command(tl.supervise, args...)
	cmd.Env = baseEnv()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, stderr
	o.start = time.Now()
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		o.err = fmt.Errorf("start: %w", err)
		return o
	}
	o.pid = cmd.Process.Pid
	s.add(o.pid)
	defer s.remove(o.pid)
	deadline := o.start.Add(sessionBudget)
	inW.SetWriteDeadline(deadline)
	outR.SetReadDeadline(deadline)

	o.err = o.converse(cmd, inW, bufio.NewReaderSize(outR, 64<<10))
	if o.err != nil {
		cmd.Process.Kill() // our own child; its session ends by the lease
	}
	waitErr := cmd.Wait()
	o.end = time.Now()
	if cmd.ProcessState != nil {
		o.code = testutil.ExitStatus(cmd.ProcessState)
	} else {
		o.err = errors.Join(o.err, fmt.Errorf("wait: %w", waitErr))
	}
	o.stderr = stderr.String()
	return o
}

// converse plays the script of the peer (see peer/main.go) from the
// client's side.
func (o *outcome) converse(cmd *exec.Cmd, in *os.File, out *bufio.Reader) error {
	first, err := out.ReadByte()
	if err != nil {
		return fmt.Errorf("first byte: %w", err)
	}
	o.latency = time.Since(o.start)
	out.UnreadByte()
	if line, err := readLine(out); err != nil || line != "ready "+o.id {
		return fmt.Errorf("greeting %q (first byte %q): %v", line, first, err)
	}
	// The peer (and its background child) runs: capture the session's
	// processes and namespace now, while the supervisor is alive.
	if o.initPID = initOf(o.pid); o.initPID != 0 {
		o.ns = testutil.PIDNamespace(o.initPID)
	}
	o.members = tree(o.pid)
	if o.ns == "" || o.ns == testutil.PIDNamespace(os.Getpid()) {
		return fmt.Errorf("no private PID namespace found (init %d, %q)", initOf(o.pid), o.ns)
	}
	if err := o.rounds(in, out); err != nil {
		return err
	}
	return o.bulk(cmd, in, out)
}

func (o *outcome) rounds(in *os.File, out *bufio.Reader) error {
	for i := 0; i < o.plan.rounds; i++ {
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","session":%q}`, i, o.id)
		t0 := time.Now()
		if _, err := io.WriteString(in, msg+"\n"); err != nil {
			return fmt.Errorf("round %d: write: %w", i, err)
		}
		line, err := readLine(out)
		if err != nil || line != "echo "+msg {
			return fmt.Errorf("round %d: got %q, %v", i, line, err)
		}
		o.roundTrips = append(o.roundTrips, time.Since(t0))
	}
	return nil
}

// bulk sends the input stream while it receives the peer's, then checks
// the trailer, closes stdin and checks that EOF follows. A session planned for a kill is killed after killAt
// received bytes, and its output is drained to EOF (which comes only when
// every process holding the pipe is gone).
func (o *outcome) bulk(cmd *exec.Cmd, in *os.File, out *bufio.Reader) error {
	sent := make(chan error, 1)
	go func() {
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(in, h), io.LimitReader(pattern.New(o.seedIn), o.plan.bytes))
		o.sentN, o.sentSum = n, h.Sum(nil)
		sent <- err
	}()
	h := sha256.New()
	if o.killAt >= 0 {
		return o.bulkKilled(cmd, out, h, sent)
	}
	n, err := io.CopyN(h, out, o.plan.bytes)
	o.recvN, o.recvSum = n, h.Sum(nil)
	if err != nil {
		// Unblock the sender (EPIPE) before reporting.
		cmd.Process.Kill()
		<-sent
		return fmt.Errorf("bulk: received %d of %d bytes: %w", n, o.plan.bytes, err)
	}
	if o.trailer, err = readLine(out); err != nil {
		cmd.Process.Kill()
		<-sent
		return fmt.Errorf("trailer: %w", err)
	}
	if err := <-sent; err != nil {
		return fmt.Errorf("bulk: sent %d bytes: %w", o.sentN, err)
	}
	// Only now, with the whole answer in, does the client close its end.
	in.Close()
	if o.extra, err = io.Copy(io.Discard, out); err != nil {
		return fmt.Errorf("after the trailer: %w", err)
	}
	return nil
}

func (o *outcome) bulkKilled(cmd *exec.Cmd, out *bufio.Reader, h hash.Hash, sent chan error) error {
	n, err := io.CopyN(h, out, o.killAt)
	cmd.Process.Kill()
	if err != nil {
		<-sent
		return fmt.Errorf("before the kill: received %d bytes: %w", n, err)
	}
	o.killedAt = time.Now()
	rest, _ := io.Copy(io.Discard, out) // EOF: no process holds the pipe any more
	o.recvN = n + rest
	<-sent // fails with EPIPE once nothing reads the supervisor's stdin
	return nil
}

// readLine reads one line without its newline.
func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return line, err
	}
	return line[:len(line)-1], nil
}

// check compares what the test saw with the plan and with the trailer the
// peer wrote: exact bytes both ways, the chosen exit code, a quiet stderr.
func (o *outcome) check() error {
	if o.err != nil {
		return fmt.Errorf("%s: %w (exit %d, stderr %q)", o.id, o.err, o.code, o.stderr)
	}
	if o.code != o.exit {
		return fmt.Errorf("%s: exit %d, peer chose %d (stderr %q)", o.id, o.code, o.exit, o.stderr)
	}
	want := fmt.Sprintf("done %s in=%d %x out=%d %x", o.id, o.sentN, o.sentSum, o.recvN, o.recvSum)
	if o.sentN != o.plan.bytes || o.recvN != o.plan.bytes || o.trailer != want || o.extra != 0 {
		return fmt.Errorf("%s: sent %d, received %d (+%d after the trailer) of %d bytes; peer says %q, the test computed %q",
			o.id, o.sentN, o.recvN, o.extra, o.plan.bytes, o.trailer, want)
	}
	if o.stderr != "" {
		return fmt.Errorf("%s: unexpected stderr %q", o.id, o.stderr)
	}
	return nil
}

// leftoverDirs lists what is left under the control root, but the
// root's own cgroup-sweep marker (an empty file that stays by design:
// internal/session/cgroup's sweepMarker).
func leftoverDirs(root string) []string {
	entries, _ := os.ReadDir(root)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "cgroup-sweep-") && e.Type().IsRegular() {
			continue
		}
		out = append(out, e.Name())
	}
	return out
}

func seedFor(i int, salt uint64) uint64 {
	return uint64(i+1)*0x100000001b3 ^ salt
}
