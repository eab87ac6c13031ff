//go:build linux

package soak

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/testutil"
)

// controlRoot makes a private parent for the sessions' control dirs, so
// that what they leave behind can be counted.
func controlRoot(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "control")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runAll drives every plan at the same time; after(o) runs in the
// session's own goroutine as soon as it ended.
func runAll(tl tools, root string, s *sampler, plans []plan, after func(*outcome)) []outcome {
	out := make([]outcome, len(plans))
	var wg sync.WaitGroup
	for i, p := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = drive(tl, root, s, p)
			if after != nil {
				after(&out[i])
			}
		}()
	}
	wg.Wait()
	return out
}

// reportErrors fails the test with the first few errors and their count.
func reportErrors(t *testing.T, what string, errs []error) {
	t.Helper()
	for i, err := range errs {
		if i == 5 {
			t.Errorf("... and %d more", len(errs)-5)
			break
		}
		t.Error(err)
	}
	if len(errs) > 0 {
		t.Errorf("%d %s failed", len(errs), what)
	}
}

// TestSessionLoad runs LOKI_SOAK_SESSIONS sessions at once through the
// namespace backend. Each does LOKI_SOAK_ROUNDS interactive round trips and
// then relays LOKI_SOAK_BYTES both ways; its peer exits with 0, 3 or 42 and
// leaves a background child behind. Every byte must arrive (sha256 at both
// ends), every exit code must be the peer's, and afterwards nothing may be
// left: no process in any of the sessions' namespaces, no control dir, no
// extra descriptor in this process.
func TestSessionLoad(t *testing.T) {
	tl := needTools(t)
	root := controlRoot(t)
	// A first session warms up this process (poller, pidfds) so that the
	// descriptor baseline taken after it is the steady one.
	ws := startSampler(time.Second)
	warm := drive(tl, root, ws, plan{id: "warm-up", seedIn: 1, seedOut: 2, bytes: 1 << 20, rounds: 2, killAt: -1})
	ws.finish()
	if err := warm.check(); err != nil {
		t.Fatalf("warm-up session: %v", err)
	}
	baseFDs := ownFDs()

	plans := make([]plan, numSessions)
	for i := range plans {
		plans[i] = plan{
			id: fmt.Sprintf("s%03d", i), seedIn: seedFor(i, 0xa5), seedOut: seedFor(i, 0x5a),
			bytes: sessionBytes, rounds: numRounds, exit: exitCodes[i%len(exitCodes)],
			killAt: -1, peerFlags: []string{"-child"},
			// The peer exits with its code after stdin EOF: part of its
			// answer, which a loaded machine may deliver after the
			// reference's 1 s EOF window.
			flags: []string{"--wait-after-eof"},
		}
	}
	s := startSampler(100 * time.Millisecond)
	began := time.Now()
	outs := runAll(tl, root, s, plans, nil)
	wall := time.Since(began)
	pk := s.finish()

	var errs []error
	var all []procid.Identity
	namespaces := map[string]bool{}
	var latencies, rtts []time.Duration
	codes := map[int]int{}
	for i := range outs {
		o := &outs[i]
		all = append(all, o.members...)
		if o.ns != "" {
			namespaces[o.ns] = true
		}
		if err := o.check(); err != nil {
			errs = append(errs, err)
		}
		latencies = append(latencies, o.latency)
		rtts = append(rtts, o.roundTrips...)
		codes[o.code]++
	}
	t.Cleanup(func() { testutil.KillLeftovers(all) })
	reportErrors(t, "sessions", errs)
	checkNothingLeft(t, namespaces, all, root, baseFDs)

	f := &figures{title: fmt.Sprintf("session load: %d concurrent sessions (namespace backend), %s each way, %d round trips",
		numSessions, mib(float64(sessionBytes)), numRounds)}
	relayed := float64(2 * sessionBytes * int64(numSessions))
	f.add("wall time", "%v", wall.Round(time.Millisecond))
	f.add("sessions/s", "%.2f", float64(numSessions)/wall.Seconds())
	f.add("relayed (both ways, all sessions)", "%s, %s/s", mib(relayed), mib(relayed/wall.Seconds()))
	f.add("start latency p50 / p99", "%v / %v", percentile(latencies, 0.5).Round(time.Millisecond), percentile(latencies, 0.99).Round(time.Millisecond))
	f.add("round trip p50 / p99", "%v / %v", percentile(rtts, 0.5).Round(time.Microsecond), percentile(rtts, 0.99).Round(time.Microsecond))
	f.add("peak fds: supervisor / init", "%d / %d (all at once: %d)", pk.supFDs, pk.initFDs, pk.totalFDs)
	f.add("peak RSS: supervisor / init", "%s / %s (all at once: %s)", mib(float64(pk.supRSS)), mib(float64(pk.initRSS)), mib(float64(pk.totalRSS)))
	f.add("most sessions alive at once", "%d (%d samples)", pk.concurrent, pk.ticks)
	f.add("exit codes seen", "%v", codes)
	f.add("bytes lost / sessions misreported", "%d / %d", lostBytes(outs), len(errs))
	f.add("leftovers: processes / dirs / fds", "0 / 0 / 0 (checked)")
	f.publish(t)
}

// lostBytes sums what did not arrive, in either direction.
func lostBytes(outs []outcome) int64 {
	var lost int64
	for _, o := range outs {
		lost += max(0, o.plan.bytes-o.sentN) + max(0, o.plan.bytes-o.recvN)
	}
	return lost
}

// checkNothingLeft: every namespace is empty, every captured process gone,
// the control root empty and this process back to its descriptor count.
// The kernel empties a namespace when its PID 1 exits, and the supervisor
// exits after its init: the short bound is only for a loaded machine.
func checkNothingLeft(t *testing.T, namespaces map[string]bool, all []procid.Identity, root string, baseFDs int) {
	t.Helper()
	settled := time.Now()
	if !testutil.WaitUntil(10*time.Second, func() bool {
		return len(testutil.NamespaceMembers(namespaces, true)) == 0 && len(testutil.Alive(all)) == 0
	}) {
		t.Errorf("left behind: in namespaces %v; processes %v", describe(testutil.NamespaceMembers(namespaces, true)), testutil.Alive(all))
	} else if d := time.Since(settled); d > 100*time.Millisecond {
		t.Logf("the last namespace emptied %v after the last supervisor exited", d.Round(time.Millisecond))
	}
	if left := leftoverDirs(root); len(left) != 0 {
		t.Errorf("control dirs left under %s: %v", root, left)
	}
	if !testutil.WaitUntil(5*time.Second, func() bool { return ownFDs() <= baseFDs }) {
		t.Errorf("this process holds %d descriptors, %d before the sessions", ownFDs(), baseFDs)
	}
}

// TestSessionKill9 kills, with SIGKILL, LOKI_SOAK_KILL_FRACTION (at least
// 20%) of LOKI_SOAK_KILL_SESSIONS supervisors in the middle of their bulk
// relay. Their peers never exit and keep a background child, and the
// parent-death signal is off, so nothing the peer does ends the session:
// loki-init must, and every process of each must be gone within lease + one
// poll + slack. (What ends it first is loki-init's own rule for host stdin
// EOF, one second after the dead supervisor's end of the pipe closed; the
// lease is the bound.) The other sessions must complete exactly, as if
// nothing happened.
func TestSessionKill9(t *testing.T) {
	const (
		leaseDur = 3 * time.Second
		poll     = 100 * time.Millisecond
		slack    = 4 * time.Second // a loaded 2-vCPU machine
		bound    = leaseDur + poll + slack
	)
	tl := needTools(t)
	root := controlRoot(t)
	// As a subreaper this process inherits the inits of killed supervisors
	// and can read how each one ended: the lease (124), host stdin EOF (0),
	// lost output (125).
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatalf("PR_SET_CHILD_SUBREAPER: %v", err)
	}
	t.Cleanup(func() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 8))
	t.Logf("kill plan seed %d", seed)
	killed := max(1, int(float64(numKillSess)*killFraction+0.999))
	if float64(killed) < 0.2*float64(numKillSess) {
		t.Fatalf("kill %d of %d is below 20%%", killed, numKillSess)
	}
	victims := rng.Perm(numKillSess)[:killed]
	plans := make([]plan, numKillSess)
	for i := range plans {
		plans[i] = plan{
			id: fmt.Sprintf("k%03d", i), seedIn: seedFor(i, 0xc3), seedOut: seedFor(i, 0x3c),
			bytes: killBytes, rounds: 10, exit: exitCodes[i%len(exitCodes)], killAt: -1,
			flags: []string{"--lease-duration", leaseDur.String(), "--renew-interval", "200ms",
				"--poll-interval", poll.String(), "--no-parent-death-signal", "--wait-after-eof"},
			peerFlags: []string{"-child"},
		}
	}
	for _, v := range victims {
		plans[v].killAt = killBytes/4 + rng.Int64N(killBytes/2)
		plans[v].peerFlags = append(plans[v].peerFlags, "-linger")
	}
	s := startSampler(250 * time.Millisecond)
	defer s.finish()
	outs := runAll(tl, root, s, plans, func(o *outcome) {
		if o.killAt >= 0 && o.err == nil {
			o.gone, o.goneErr = awaitGone(o, bound)
		}
	})

	var errs []error
	var all []procid.Identity
	var gones []time.Duration
	endings := map[string]int{}
	namespaces := map[string]bool{}
	for i := range outs {
		o := &outs[i]
		all = append(all, o.members...)
		namespaces[o.ns] = true
		switch {
		case o.killAt < 0:
			if err := o.check(); err != nil {
				errs = append(errs, err)
			}
		case o.err != nil:
			errs = append(errs, fmt.Errorf("%s (killed): %w", o.id, o.err))
		case o.goneErr != nil:
			errs = append(errs, fmt.Errorf("%s (killed): %w", o.id, o.goneErr))
		default:
			gones = append(gones, o.gone)
			endings[o.initStatus]++
		}
	}
	t.Cleanup(func() { testutil.KillLeftovers(all) })
	reportErrors(t, "sessions", errs)
	settled := time.Now()
	if !testutil.WaitUntil(10*time.Second, func() bool {
		return len(testutil.NamespaceMembers(namespaces, true)) == 0 && len(testutil.Alive(all)) == 0
	}) {
		t.Errorf("left behind: in namespaces %v; processes %v", describe(testutil.NamespaceMembers(namespaces, true)), testutil.Alive(all))
	} else if d := time.Since(settled); d > 100*time.Millisecond {
		t.Logf("the last namespace emptied %v after the last supervisor exited", d.Round(time.Millisecond))
	}
	dirs := leftoverDirs(root)
	if len(dirs) > killed {
		t.Errorf("%d control dirs left, only %d supervisors were killed: %v", len(dirs), killed, dirs)
	}
	// A killed supervisor cannot remove its control dir; the next session
	// under the same root sweeps the dirs of dead owners.
	next := drive(tl, root, s, plan{id: "sweeper", seedIn: 3, seedOut: 4, bytes: 1024, killAt: -1})
	if err := next.check(); err != nil {
		t.Errorf("session after the kills: %v", err)
	}
	if left := leftoverDirs(root); len(left) != 0 {
		t.Errorf("control dirs left after the next session's sweep: %v", left)
	}

	f := &figures{title: fmt.Sprintf("kill -9: %d of %d supervisors killed mid-relay (lease %v, poll %v, no parent-death signal)",
		killed, numKillSess, leaseDur, poll)}
	f.add("killed sessions gone: min / max", "%v / %v (bound %v)", percentile(gones, 0).Round(time.Millisecond), percentile(gones, 1).Round(time.Millisecond), bound)
	f.add("how the orphaned inits ended", "%v", endings)
	f.add("unaffected sessions exact", "%d of %d", numKillSess-killed-countUnaffectedErrs(outs), numKillSess-killed)
	f.add("control dirs left by killed ones", "%d (swept by the next session: checked)", len(dirs))
	f.publish(t)
}

func countUnaffectedErrs(outs []outcome) int {
	n := 0
	for i := range outs {
		if outs[i].killAt < 0 && outs[i].check() != nil {
			n++
		}
	}
	return n
}

// awaitGone waits, from the kill, for every captured process of the
// session and every member of its namespace to be gone, and reaps the
// orphaned init (this process is its subreaper) to learn its exit.
func awaitGone(o *outcome, bound time.Duration) (time.Duration, error) {
	ns := map[string]bool{o.ns: true}
	reaped := false
	gone := func() bool {
		if !reaped {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(o.initPID, &ws, unix.WNOHANG, nil)
			switch {
			case err != nil:
				reaped, o.initStatus = true, "not reaped here: "+err.Error()
			case pid == o.initPID:
				reaped, o.initStatus = true, waitStatus(ws)
			}
		}
		return reaped && len(testutil.Alive(o.members)) == 0 && len(testutil.NamespaceMembers(ns, true)) == 0
	}
	if !testutil.WaitUntil(time.Until(o.killedAt.Add(bound)), gone) {
		return 0, fmt.Errorf("still alive %v after the kill: %v; in %s: %v", bound, testutil.Alive(o.members), o.ns, testutil.NamespaceMembers(ns, true))
	}
	return time.Since(o.killedAt), nil
}

func waitStatus(ws unix.WaitStatus) string {
	if ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return fmt.Sprintf("exit %d", ws.ExitStatus())
}
