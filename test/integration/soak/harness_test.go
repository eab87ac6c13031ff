//go:build linux

package soak

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/testutil"
)

// tools are the binaries every soak test runs.
type tools struct {
	supervise, init, peer string
}

var (
	peerOnce sync.Once
	peerPath string
	peerErr  error
	peerDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if peerDir != "" {
		os.RemoveAll(peerDir)
	}
	os.Exit(code)
}

// needTools checks the privileges (root, PID namespaces) and returns the
// binaries, building the peer once per test process.
func needTools(t *testing.T) tools {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequirePIDNamespace(t)
	peerOnce.Do(func() { peerPath, peerErr = buildPeer(testutil.ModuleRoot(t)) })
	if peerErr != nil {
		t.Fatalf("build the soak peer: %v", peerErr)
	}
	return tools{
		supervise: testutil.Binary(t, "loki-supervise"),
		init:      testutil.Binary(t, "loki-init"),
		peer:      peerPath,
	}
}

func buildPeer(root string) (string, error) {
	dir, err := os.MkdirTemp("", "loki-soak-peer-")
	if err != nil {
		return "", fmt.Errorf("temp dir: %w", err)
	}
	peerDir = dir
	out := filepath.Join(dir, "peer")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./test/integration/soak/peer")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, stderr.String())
	}
	// The peer runs as root without capabilities: make it readable and
	// executable by anyone, as a real agent binary would be.
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", fmt.Errorf("chmod: %w", err)
	}
	return out, nil
}

// baseEnv is the supervisors' environment: nothing of the test's LOKI_*
// settings, a fixed locale.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOKI_") {
			env = append(env, kv)
		}
	}
	return append(env, "LC_ALL=C")
}

// ownFDs counts the test process's open descriptors.
func ownFDs() int {
	entries, _ := os.ReadDir("/proc/self/fd")
	return len(entries)
}

// children lists the direct children of pid, over all its threads (a Go
// program forks from whichever thread runs the call).
func children(pid int) []int {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var out []int
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// tree captures the identities of every live descendant of pid.
func tree(pid int) []procid.Identity {
	var out []procid.Identity
	queue := children(pid)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if id, err := procid.Capture(p); err == nil {
			out = append(out, id)
		}
		queue = append(queue, children(p)...)
	}
	return out
}

func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// initOf returns the loki-init child of a supervisor, 0 while there is none
// (the namespace stage has not exec'd it yet).
func initOf(sup int) int {
	for _, c := range children(sup) {
		if comm(c) == "loki-init" {
			return c
		}
	}
	return 0
}

// describe names each leftover process: pid, state, command.
func describe(members map[string][]int) map[string][]string {
	out := map[string][]string{}
	for ns, pids := range members {
		for _, p := range pids {
			st, _ := procid.Stat(p)
			out[ns] = append(out[ns], fmt.Sprintf("%d(%c %s ppid %d)", p, st.State, comm(p), st.PPID))
		}
	}
	return out
}

// usage is one /proc sample of a process: descriptors and resident memory
// (VmHWM, the kernel's own peak, so a short spike between samples counts).
type usage struct {
	fds int
	rss int64 // bytes
}

func sample(pid int) (usage, bool) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return usage{}, false
	}
	defer f.Close()
	var u usage
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			u.rss = kb << 10
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return usage{}, false
	}
	u.fds = len(fds)
	return u, true
}

// peaks is what the sampler saw: the largest single supervisor and init,
// and the largest total of all of them at one moment.
type peaks struct {
	supFDs, initFDs   int
	supRSS, initRSS   int64
	totalFDs          int
	totalRSS          int64
	concurrent, ticks int
}

// sampler watches the live supervisors (and their inits) every interval.
type sampler struct {
	mu    sync.Mutex
	live  map[int]int // supervisor pid -> init pid (0 until found)
	peaks peaks
	stop  chan struct{}
	done  chan struct{}
}

func startSampler(interval time.Duration) *sampler {
	s := &sampler{live: map[int]int{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
				s.tick()
			}
		}
	}()
	return s
}

func (s *sampler) add(sup int)    { s.mu.Lock(); s.live[sup] = 0; s.mu.Unlock() }
func (s *sampler) remove(sup int) { s.mu.Lock(); delete(s.live, sup); s.mu.Unlock() }

func (s *sampler) tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	var totalFDs int
	var totalRSS int64
	for sup, init := range s.live {
		if u, ok := sample(sup); ok {
			s.peaks.supFDs = max(s.peaks.supFDs, u.fds)
			s.peaks.supRSS = max(s.peaks.supRSS, u.rss)
			totalFDs += u.fds
			totalRSS += u.rss
		}
		if init == 0 {
			init = initOf(sup)
			s.live[sup] = init
		}
		if init == 0 {
			continue
		}
		if u, ok := sample(init); ok {
			s.peaks.initFDs = max(s.peaks.initFDs, u.fds)
			s.peaks.initRSS = max(s.peaks.initRSS, u.rss)
			totalFDs += u.fds
			totalRSS += u.rss
		}
	}
	s.peaks.totalFDs = max(s.peaks.totalFDs, totalFDs)
	s.peaks.totalRSS = max(s.peaks.totalRSS, totalRSS)
	s.peaks.concurrent = max(s.peaks.concurrent, len(s.live))
	s.peaks.ticks++
}

func (s *sampler) finish() peaks {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peaks
}

// capped keeps the first n bytes written to it (a supervisor's stderr).
type capped struct {
	mu sync.Mutex
	b  bytes.Buffer
	n  int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.n - c.b.Len(); room > 0 {
		c.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}
