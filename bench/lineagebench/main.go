//go:build linux

// Command lineagebench measures the cost of one lineage refresh against the
// upstream approach (scan every process in /proc on every refresh) with a
// lineage of 20 processes and 10, 1,000 and 5,000 unrelated processes on the
// host. Linux only; run by bench/lineage.sh.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/loki-sh/loki/internal/proc/lineage"
	"github.com/loki-sh/loki/internal/proc/procid"
)

const (
	lineageSize = 20
	measureFor  = time.Second // per method and host size
	sleeperLife = "600"       // a leaked sleeper (bench killed) ends on its own
)

func main() {
	lineage.MaybeRunGate()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "lineagebench:", err)
		os.Exit(1)
	}
}

func run() error {
	r, err := lineage.Start(lineage.Command{
		Args: []string{"sh", "-c", "i=1; while [ $i -lt " + strconv.Itoa(lineageSize) + " ]; do sleep " + sleeperLife + " & i=$((i+1)); done; wait"},
		Env:  []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
	})
	if err != nil {
		return err
	}
	defer func() { r.Reconcile(0); r.Close() }()
	if err := waitLineage(r); err != nil {
		return err
	}
	var groups []*sleepers
	defer func() {
		for _, g := range groups {
			g.stop()
		}
	}()
	fmt.Printf("lineage of %d, containment %s; %d vCPU shared with other work: figures are under contention\n\n",
		lineageSize, r.Containment(), numCPU())
	fmt.Printf("%-22s %18s %20s %8s\n", "unrelated processes", "lineage refresh µs", "full /proc scan µs", "ratio")
	have := 0
	for _, want := range []int{10, 1000, 5000} {
		g, err := spawnSleepers(want - have)
		if err != nil {
			return err
		}
		groups = append(groups, g)
		have = want
		total, _ := countProcs()
		lin, err := measure(func() error { return r.Refresh() })
		if err != nil {
			return err
		}
		found := 0
		full, err := measure(func() error {
			n, err := fullScan(r.PID())
			found = n
			return err
		})
		if err != nil {
			return err
		}
		if m := len(r.Members()); m != lineageSize || found != lineageSize {
			return fmt.Errorf("lineage refresh saw %d members, full scan %d, want %d", m, found, lineageSize)
		}
		fmt.Printf("%-22s %18.1f %20.1f %7.0fx\n", fmt.Sprintf("%d (%d on host)", want, total), lin, full, full/lin)
	}
	return nil
}

// waitLineage waits (bounded) for all members, then past the discovery
// window, so the steady state is measured.
func waitLineage(r *lineage.Runner) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := r.Refresh(); err != nil {
			return err
		}
		if len(r.Members()) == lineageSize {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("lineage has %d members, want %d", len(r.Members()), lineageSize)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond)
	return r.Refresh()
}

// measure returns µs per call, calling f for about measureFor (at least 5 times).
func measure(f func() error) (float64, error) {
	start := time.Now()
	n := 0
	for n < 5 || time.Since(start) < measureFor {
		if err := f(); err != nil {
			return 0, err
		}
		n++
	}
	return float64(time.Since(start).Microseconds()) / float64(n), nil
}

// fullScan is the upstream approach: read the stat of every process on the
// host, then take the runner, its session and the descendants of members.
// (Upstream also reads environments; leaving that out makes this baseline
// cheaper than the real one, so the ratio is a lower bound.)
func fullScan(runner int) (int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return 0, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return 0, err
	}
	type ps struct{ ppid, sid int }
	all := make(map[int]ps, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 20 || f[0][0] == 'Z' {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		sid, _ := strconv.Atoi(string(f[3]))
		all[pid] = ps{ppid, sid}
	}
	members := map[int]bool{}
	for pid, p := range all {
		if pid == runner || p.sid == runner {
			members[pid] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for pid, p := range all {
			if !members[pid] && members[p.ppid] {
				members[pid] = true
				changed = true
			}
		}
	}
	return len(members), nil
}

// sleepers is a shell holding n sleeping children in its own process group;
// none of them is a child of this process, like unrelated host processes.
type sleepers struct {
	cmd *exec.Cmd
	id  procid.Identity
}

func spawnSleepers(n int) (*sleepers, error) {
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt "+strconv.Itoa(n)+" ]; do sleep "+sleeperLife+" & i=$((i+1)); done; echo ready; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &sleepers{cmd: cmd}
	if g.id, err = procid.Capture(cmd.Process.Pid); err != nil {
		g.stop()
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		g.stop()
		return nil, errors.New("sleepers did not start (pid limit?)")
	}
	return g, nil
}

// stop kills the group we created, by its leader's verified identity.
func (g *sleepers) stop() {
	if g.id.Valid() && g.id.Matches() {
		_ = syscall.Kill(-g.id.PID(), syscall.SIGKILL)
	}
	_ = g.cmd.Wait()
}

func countProcs() (int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return 0, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	n := 0
	for _, s := range names {
		if s[0] >= '0' && s[0] <= '9' {
			n++
		}
	}
	return n, err
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return bytes.Count(b, []byte("\nprocessor")) + 1
}
