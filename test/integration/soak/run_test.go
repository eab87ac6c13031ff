//go:build linux

package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/testutil"
)

// runEnv is one private loki installation for durable executions.
type runEnv struct {
	tl   tools
	root string // temp dir: data dir and workspaces
	data string
	env  []string
}

func newRunEnv(t *testing.T) *runEnv {
	t.Helper()
	tl := needTools(t)
	root := t.TempDir()
	e := &runEnv{tl: tl, root: root, data: filepath.Join(root, "data")}
	e.env = append(baseEnv(), "LOKI_DATA_DIR="+e.data,
		"LOKI_BUILD_SUPERVISOR_POLL_SECONDS=0.1", "LOKI_BUILD_DESCENDANT_GRACE_SECONDS=0.5")
	return e
}

func (e *runEnv) statePath(id string) string {
	return filepath.Join(e.data, "dashboard", "builds", id, "state.json")
}

// execution is one `loki-supervise run` of the soak and what became of it.
type execution struct {
	id       string
	code     int // the runner's own exit code
	supPID   int
	supCode  int
	supErr   string
	stop     stopResult
	stopAt   time.Duration // after the start
	killed   bool
	started  time.Time
	ended    time.Time
	startErr error
}

// stopResult is what `loki-supervise stop` said.
type stopResult struct {
	outcome string // "requested", "already exited", or the unexpected text
	tries   int    // attempts before the record existed
	at      time.Time
}

// start launches `run` for one execution: a shell runner that prints, sleeps
// and exits with code.
func (e *runEnv) start(x *execution, sleep time.Duration) (*exec.Cmd, *capped, error) {
	ws := filepath.Join(e.root, "ws-"+x.id)
	if err := os.Mkdir(ws, 0o700); err != nil {
		return nil, nil, fmt.Errorf("workspace: %w", err)
	}
	script := fmt.Sprintf("echo up; sleep %.3f; echo down; exit %d", sleep.Seconds(), x.code)
	cmd := exec.Command(e.tl.supervise, "run", "--execution-id", x.id, "--workspace", ws, "--", "/bin/sh", "-c", script)
	cmd.Env = e.env
	stderr := &capped{n: 4096}
	cmd.Stderr = stderr
	x.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start run: %w", err)
	}
	x.supPID = cmd.Process.Pid
	return cmd, stderr, nil
}

// requestStop runs `loki-supervise stop` from another process; a request
// that comes before the record exists is retried, since the moment chosen
// for it was before the execution could be named.
func (e *runEnv) requestStop(id string) stopResult {
	var r stopResult
	for r.tries = 1; ; r.tries++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, e.tl.supervise, "stop", id)
		cmd.Env = e.env
		out, err := cmd.CombinedOutput()
		cancel()
		text := string(out)
		r.at = time.Now()
		switch {
		case err == nil && strings.Contains(text, "stop requested for "+id):
			r.outcome = "requested"
		case strings.Contains(text, "already exited"):
			r.outcome = "already exited"
		case strings.Contains(text, "no such execution") && r.tries < 200:
			time.Sleep(20 * time.Millisecond)
			continue
		default:
			r.outcome = fmt.Sprintf("unexpected: %v %q", err, text)
		}
		return r
	}
}

// tornWatch reads every state.json over and over while the executions run:
// each read must parse (the file may be absent before it is first written),
// and a record's state may only move forward.
type tornWatch struct {
	mu      sync.Mutex
	samples int
	torn    []string
	back    []string
	last    map[string]string
	stop    chan struct{}
	done    chan struct{}
}

var stateRank = map[string]int{"": 0, "running": 1, "exited": 2}

func watchRecords(paths map[string]string) *tornWatch {
	w := &tornWatch{last: map[string]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			for id, p := range paths {
				w.read(id, p)
			}
			select {
			case <-w.stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *tornWatch) read(id, path string) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples++
	var rec map[string]any
	if err == nil {
		err = json.Unmarshal(b, &rec)
	}
	if err != nil {
		w.torn = append(w.torn, fmt.Sprintf("%s: %v (%d bytes)", id, err, len(b)))
		return
	}
	st, _ := rec["state"].(string)
	if stateRank[st] < stateRank[w.last[id]] {
		w.back = append(w.back, fmt.Sprintf("%s: %s after %s", id, st, w.last[id]))
	}
	w.last[id] = st
}

func (w *tornWatch) finish() (samples int, torn, back []string) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.samples, w.torn, w.back
}

func readRecord(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return rec, nil
}

// num returns a JSON number field as an int, ok=false when absent or null.
func num(rec map[string]any, k string) (int, bool) {
	f, ok := rec[k].(float64)
	return int(f), ok
}

func str(rec map[string]any, k string) string { s, _ := rec[k].(string); return s }

// checkTerminal validates a finished execution's record against what its
// runner did, what the stop request said, and the supervisor's exit code.
// It returns the outcome class for the figures.
func checkTerminal(x *execution, rec map[string]any) (string, error) {
	fail := func(format string, a ...any) (string, error) {
		return "", fmt.Errorf("%s (code %d, stop %q at %v, supervisor exit %d): %s; record %v",
			x.id, x.code, x.stop.outcome, x.stopAt.Round(time.Millisecond), x.supCode, fmt.Sprintf(format, a...), rec)
	}
	if str(rec, "state") != "exited" || str(rec, "exited_at") == "" || str(rec, "finished_at") == "" {
		return fail("not in a terminal state")
	}
	if pid, _ := num(rec, "supervisor_pid"); pid != x.supPID {
		return fail("supervisor_pid %d, want %d", pid, x.supPID)
	}
	rp, _ := num(rec, "runner_pid")
	pg, _ := num(rec, "runner_pgid")
	sid, _ := num(rec, "runner_sid")
	if rp <= 1 || pg != rp || sid != rp || str(rec, "started_at") > str(rec, "exited_at") {
		return fail("runner identity or times inconsistent")
	}
	if id, err := procid.Restore(rp, str(rec, "runner_birth_token")); err == nil && id.Matches() {
		return fail("the runner is still alive")
	}
	rc, _ := num(rec, "returncode")
	exitC, hasExit := num(rec, "exit_code")
	sig, hasSig := num(rec, "signal")
	requested, sent := str(rec, "stop_requested_at"), str(rec, "stop_signal_sent_at")
	if x.stop.outcome == "requested" && requested == "" {
		return fail("stop was acknowledged but stop_requested_at is missing")
	}
	if x.stop.outcome == "already exited" && requested != "" {
		return fail("stop was refused as too late but stop_requested_at is set")
	}
	if sent != "" {
		if str(rec, "termination_reason") != "stopped" || requested == "" || sent < requested {
			return fail("a stop signal was sent but the record does not say stopped in order")
		}
		if rc == -15 && hasSig && sig == 15 && !hasExit && x.supCode == 128+15 {
			return "stopped by SIGTERM", nil
		}
		if rc == x.code && hasExit && exitC == x.code && !hasSig && x.supCode == x.code {
			return "stopped, runner exited first", nil
		}
		return fail("stopped with an inconsistent status")
	}
	want := "failed" // a plain run is named by its own code
	if x.code == 0 {
		want = "succeeded"
	}
	if str(rec, "termination_reason") != want || rc != x.code || !hasExit || exitC != x.code || hasSig || x.supCode != x.code {
		return fail("want %s with code %d", want, x.code)
	}
	if requested != "" {
		return "stop requested, runner exited first", nil
	}
	return "ran to its end (stop too late)", nil
}

// TestRunLoad runs LOKI_SOAK_RUNS durable executions at once; each gets a
// `stop` from another process at a random moment (before its launch, while
// it runs, or after it ended). Every state.json must parse whenever it is
// read, and every record must end in the terminal state that matches what
// happened: stopped (SIGTERM, 143), or the runner's own code (crashed for
// 3 and 42, verification_failed for 0: `run` binds no proof).
func TestRunLoad(t *testing.T) {
	e := newRunEnv(t)
	const sleep = 1500 * time.Millisecond
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 100))
	t.Logf("stop plan seed %d", seed)
	xs := make([]*execution, numRuns)
	paths := map[string]string{}
	for i := range xs {
		xs[i] = &execution{
			id:     fmt.Sprintf("00005a4c-%04x-4000-8000-%012x", seed&0xffff, i),
			code:   exitCodes[i%len(exitCodes)],
			stopAt: time.Duration(rng.Int64N(int64(2 * sleep))),
		}
		paths[xs[i].id] = e.statePath(xs[i].id)
	}
	w := watchRecords(paths)
	began := time.Now()
	var wg sync.WaitGroup
	for _, x := range xs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.runOne(x, sleep)
		}()
	}
	wg.Wait()
	wall := time.Since(began)
	samples, torn, back := w.finish()

	var errs []error
	classes := map[string]int{}
	var stopToEnd []time.Duration
	for _, x := range xs {
		if x.startErr != nil {
			errs = append(errs, fmt.Errorf("%s: %w", x.id, x.startErr))
			continue
		}
		rec, err := readRecord(e.statePath(x.id))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		class, err := checkTerminal(x, rec)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		classes[class]++
		if class == "stopped by SIGTERM" {
			stopToEnd = append(stopToEnd, x.ended.Sub(x.stop.at))
		}
	}
	reportErrors(t, "executions", errs)
	for _, s := range append(torn, back...) {
		t.Error(s)
	}
	tmp := leftoverTemps(e.data)
	if len(tmp) != 0 {
		t.Errorf("temp files left in records: %v", tmp)
	}

	f := &figures{title: fmt.Sprintf("durable runs: %d concurrent `run`, each stopped from another process at a random moment (0-%v)", numRuns, 2*sleep)}
	f.add("wall time", "%v", wall.Round(time.Millisecond))
	f.add("executions/s", "%.2f", float64(numRuns)/wall.Seconds())
	f.add("state.json reads / torn / backwards", "%d / %d / %d", samples, len(torn), len(back))
	for _, c := range sortedKeys(classes) {
		f.add("  "+c, "%d", classes[c])
	}
	f.add("stop ack to supervisor exit p50/p99", "%v / %v", percentile(stopToEnd, 0.5).Round(time.Millisecond), percentile(stopToEnd, 0.99).Round(time.Millisecond))
	f.add("invalid terminal records", "%d", len(errs))
	f.publish(t)
}

// runOne runs one execution and its stop request to the end.
func (e *runEnv) runOne(x *execution, sleep time.Duration) {
	cmd, stderr, err := e.start(x, sleep)
	if err != nil {
		x.startErr = err
		return
	}
	w := testutil.Wait(cmd)
	time.Sleep(time.Until(x.started.Add(x.stopAt))) // the random moment is the point
	x.stop = e.requestStop(x.id)
	var ok bool
	x.supCode, ok = w.Within(2 * time.Minute)
	x.ended = time.Now()
	if !ok {
		x.startErr = errors.New("the supervisor did not end within 2 minutes")
	}
	x.supErr = stderr.String()
}

// leftoverTemps lists the atomic-write temp files left in record dirs.
func leftoverTemps(data string) []string {
	m, _ := filepath.Glob(filepath.Join(data, "dashboard", "builds", "*", ".*.tmp"))
	return m
}

func sortedKeys(m map[string]int) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestRunKill9 kills, with SIGKILL, LOKI_SOAK_KILL_FRACTION (at least 20%)
// of LOKI_SOAK_KILL_RUNS supervisors at random moments while every
// state.json is read in a loop. No read may ever see torn JSON; a killed
// execution's record stays readable and, once it was running, `status`
// calls its supervisor lost (and its runner gone, once it died with it);
// the others end exactly as their runner chose.
func TestRunKill9(t *testing.T) {
	e := newRunEnv(t)
	const sleep = 2 * time.Second
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 9))
	t.Logf("kill plan seed %d", seed)
	killed := max(1, int(float64(numKillRuns)*killFraction+0.999))
	if float64(killed) < 0.2*float64(numKillRuns) {
		t.Fatalf("kill %d of %d is below 20%%", killed, numKillRuns)
	}
	xs := make([]*execution, numKillRuns)
	paths := map[string]string{}
	for i := range xs {
		xs[i] = &execution{id: fmt.Sprintf("00009c11-%04x-4000-8000-%012x", seed&0xffff, i), code: exitCodes[i%len(exitCodes)]}
		paths[xs[i].id] = e.statePath(xs[i].id)
	}
	for _, v := range rng.Perm(numKillRuns)[:killed] {
		xs[v].killed = true
		xs[v].stopAt = time.Duration(rng.Int64N(int64(sleep * 3 / 4)))
	}
	w := watchRecords(paths)
	var wg sync.WaitGroup
	for _, x := range xs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.killOne(x, sleep)
		}()
	}
	wg.Wait()
	samples, torn, back := w.finish()
	var runners []procid.Group
	t.Cleanup(func() { killGroups(runners) })

	var errs []error
	lost, unaffectedBad := 0, 0
	for _, x := range xs {
		rec, err := readRecord(e.statePath(x.id))
		switch {
		case x.startErr != nil:
			errs = append(errs, fmt.Errorf("%s: %w", x.id, x.startErr))
		case errors.Is(err, os.ErrNotExist) && x.killed:
			// Killed before the record was first written: nothing to tear.
		case err != nil:
			errs = append(errs, err)
		case x.killed:
			runners = append(runners, runnerGroup(rec))
			if str(rec, "state") == "running" {
				if err := e.expectLost(x.id); err != nil {
					errs = append(errs, err)
				}
				lost++
			}
		default:
			if _, err := checkTerminal(x, rec); err != nil {
				errs = append(errs, err)
				unaffectedBad++
			}
		}
	}
	reportErrors(t, "executions", errs)
	for _, s := range append(torn, back...) {
		t.Error(s)
	}

	f := &figures{title: fmt.Sprintf("kill -9: %d of %d `run` supervisors killed at random moments", killed, numKillRuns)}
	f.add("state.json reads / torn / backwards", "%d / %d / %d", samples, len(torn), len(back))
	f.add("killed while running (status: lost)", "%d", lost)
	f.add("atomic-write temp files left", "%d", len(leftoverTemps(e.data)))
	f.add("unaffected records exact", "%d of %d", numKillRuns-killed-unaffectedBad, numKillRuns-killed)
	f.publish(t)
}

// killOne runs one execution; a victim's supervisor is killed at stopAt.
func (e *runEnv) killOne(x *execution, sleep time.Duration) {
	cmd, stderr, err := e.start(x, sleep)
	if err != nil {
		x.startErr = err
		return
	}
	if x.killed {
		time.Sleep(time.Until(x.started.Add(x.stopAt))) // the random moment is the point
		cmd.Process.Signal(syscall.SIGKILL)
	}
	var ok bool
	if x.supCode, ok = testutil.Wait(cmd).Within(2 * time.Minute); !ok {
		x.startErr = errors.New("the supervisor did not end within 2 minutes")
	}
	x.supErr = stderr.String()
}

// expectLost: `status --json` of an execution whose supervisor was killed
// says so, and does not claim it is simply running.
func (e *runEnv) expectLost(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.tl.supervise, "status", id, "--json")
	cmd.Env = e.env
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s: status: %w", id, err)
	}
	var v struct {
		Display string `json:"display_state"`
		Alive   bool   `json:"supervisor_alive"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return fmt.Errorf("%s: status --json %q: %w", id, out, err)
	}
	// "running (supervisor lost)" until the runner, killed with its
	// supervisor (parent death signal), is gone; "lost (supervisor
	// lost, runner gone; ...)" after.
	if v.Alive || (v.Display != "running (supervisor lost)" && !strings.HasPrefix(v.Display, "lost (supervisor lost, runner gone")) {
		return fmt.Errorf("%s: killed supervisor shown as %q (alive %v)", id, v.Display, v.Alive)
	}
	return nil
}

// runnerGroup is the runner a record names, for the cleanup of orphans.
func runnerGroup(rec map[string]any) procid.Group {
	pid, _ := num(rec, "runner_pid")
	return procid.Group{PID: pid, PGID: pid, SID: pid, Token: str(rec, "runner_birth_token")}
}

// killGroups ends orphaned runners this test started; Signal verifies the
// group's identity first, so nothing else can be hit.
func killGroups(gs []procid.Group) {
	for _, g := range gs {
		if g.PID > 1 {
			g.Signal(syscall.SIGKILL)
		}
	}
}
