// Command initbench measures loki-init side by side with other PID-1 inits
// (tini, dumb-init, catatonit), the Python reference init, and a bare
// `unshare --pid --fork`, on the same peer commands, and prints one table
// with ratios against tini. It is driven by bench/init.sh; sizes come from
// flags so a run stays within a few minutes.
//
// Every contender runs as `unshare --pid --fork --mount-proc INIT... PEER`.
// For loki-init and the reference, this program is also the host: it
// writes the launch prelude on the init's stdin and renews the lease as
// loki-supervise does (at once when the init reads its baseline, a timer
// only as the fallback, then every second).
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/lease"
	"github.com/loki-sh/loki/internal/pid1"
)

type contender struct {
	name     string
	init     []string // argv between unshare and the peer ("" = none)
	protocol bool     // speaks the lease + prelude protocol (control dir appended)
	// hop, when set, is not an init but bench/splicehop: a bare forwarder
	// the peer's output crosses, measured in the throughput rows only.
	hop string
	// ownPids: the init runs as on the namespace backend with cgroup v1,
	// outside the peer's pids count (-peer-cgroup-fd, no spare threads);
	// the descriptor is /dev/null here, so the peer is not moved.
	ownPids bool
}

func main() {
	lokiInit := flag.String("loki-init", "bin/loki-init", "loki-init binary")
	reference := flag.String("reference", "", "kranz_pid1.py (skipped when empty or absent)")
	runs := flag.Int("runs", 20, "start-to-exit runs per contender (median)")
	bytesN := flag.Int64("bytes", 2<<30, "stdout throughput volume")
	where := flag.String("placements", "free,cpu0,init-cpu0,split", "throughput rows: free, cpu0 (peer, init and reader on CPU 0), init-cpu0 (peer and init on CPU 0, reader free), split (peer and init on CPU 0, reader on CPU 1)")
	streams := flag.Int("streams", 5, "throughput runs per contender and placement (median)")
	idle := flag.Duration("idle", 10*time.Second, "idle measurement window")
	orphans := flag.Int("orphans", 2000, "orphans created by the reaping peer")
	only := flag.String("only", "", "comma-separated contenders to run (default: all)")
	baseline := flag.String("baseline", "", "an earlier loki-init build, measured in the same run as \"loki-base\"")
	hop := flag.String("splicehop", "", "bench/splicehop binary: adds a \"splice-hop\" column to the throughput rows (a plain splice forwarder: what the extra pipe hop costs without loki-init's work)")
	flag.Parse()

	cs := []contender{{name: "bare"}}
	for _, c := range []contender{
		{name: "tini", init: []string{"tini", "--"}},
		{name: "dumb-init", init: []string{"dumb-init"}},
		{name: "catatonit", init: []string{"catatonit", "--"}},
	} {
		if _, err := exec.LookPath(c.init[0]); err != nil {
			fmt.Fprintf(os.Stderr, "initbench: %s not installed, skipped\n", c.name)
			continue
		}
		cs = append(cs, c)
	}
	abs, _ := filepath.Abs(*lokiInit)
	cs = append(cs, contender{name: "loki-init", init: []string{abs, "-peer-cgroup-fd", "3"}, protocol: true, ownPids: true})
	if *baseline != "" {
		// A build that knows -peer-cgroup-fd runs as the loki-init
		// column does; an older one without it (and so with spare
		// threads).
		b, _ := filepath.Abs(*baseline)
		base := contender{name: "loki-base", init: []string{b}, protocol: true}
		if help, _ := exec.Command(b, "-h").CombinedOutput(); bytes.Contains(help, []byte("peer-cgroup-fd")) {
			base.init, base.ownPids = append(base.init, "-peer-cgroup-fd", "3"), true
		}
		cs = append(cs, base)
	}
	if *hop != "" {
		h, _ := filepath.Abs(*hop)
		cs = append(cs, contender{name: "splice-hop", hop: h})
	}
	if *reference != "" {
		if _, err := os.Stat(*reference); err == nil {
			cs = append(cs, contender{name: "reference", init: []string{"python3", "-I", "-S", "-u", *reference}, protocol: true})
		} else {
			fmt.Fprintf(os.Stderr, "initbench: reference %s absent, skipped\n", *reference)
		}
	}

	if *only != "" {
		keep := cs[:0]
		for _, c := range cs {
			if strings.Contains(","+*only+",", ","+c.name+",") {
				keep = append(keep, c)
			}
		}
		cs = keep
	}
	t := newTable(cs)
	fmt.Fprintf(os.Stderr, "initbench: start-to-exit of /bin/true (%d runs each, interleaved)\n", *runs)
	for i, ms := range interleaved(cs, *runs, startToExit) {
		t.set("true: start-to-exit ms (median)", i, ms, false)
	}
	for _, p := range placements {
		if !strings.Contains(","+*where+",", ","+p.name+",") {
			continue
		}
		fmt.Fprintf(os.Stderr, "initbench: %s, %d MiB x %d, interleaved\n", p.label, *bytesN>>20, *streams)
		rates, cpus := throughputs(cs, *bytesN, p, *streams)
		for i := range cs {
			t.set(p.label, i, rates[i], true)
			t.set(p.cpuLabel(), i, cpus[i], false)
		}
	}
	fmt.Fprintf(os.Stderr, "initbench: idle for %v (all contenders at once)\n", *idle)
	idles := idleAll(cs, *idle)
	for i := range cs {
		t.set("idle: init CPU ms", i, idles[i].cpuMS, false)
		t.set("idle: init ctx switches/s", i, idles[i].switches, false)
		t.set("idle: init ctx switches per renewal", i, idles[i].perRenewal, false)
		t.set("idle: init threads", i, idles[i].threads, false)
		t.set("idle: init RSS MiB", i, idles[i].rssMiB, false)
	}
	fmt.Fprintf(os.Stderr, "initbench: %d orphans\n", *orphans)
	for i, c := range cs {
		secs, zombies := reaping(c, *orphans)
		t.set(fmt.Sprintf("%d orphans: seconds", *orphans), i, secs, false)
		t.set(fmt.Sprintf("%d orphans: zombies left", *orphans), i, zombies, false)
	}
	t.print(os.Stdout)
}

// session is one running contender.
type session struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	stop     chan struct{}
	renewed  sync.WaitGroup
	renewals atomic.Int64 // renewals made so far
	control  string
	exited   time.Time // when the init's exit was collected
}

func startSession(c contender, peer []string, stdout io.Writer, pinned bool) (*session, error) {
	argv := []string{"unshare", "--pid", "--fork", "--mount-proc"}
	if pinned {
		argv = append([]string{"taskset", "-c", "0"}, argv...)
	}
	argv = append(argv, c.init...)
	s := &session{stop: make(chan struct{})}
	var prelude []byte
	if c.protocol {
		dir, err := os.MkdirTemp("", "initbench-")
		if err != nil {
			return nil, err
		}
		s.control = dir
		argv = append(argv, dir)
		prelude, err = launch.Encode(launch.Spec{Argv: peer, Cwd: "/", Env: map[string]string{"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}})
		if err != nil {
			return nil, err
		}
	} else {
		argv = append(argv, peer...)
	}
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Stdout = stdout
	s.cmd.Stderr = os.Stderr
	if c.ownPids {
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		defer null.Close()
		s.cmd.ExtraFiles = []*os.File{null}
	}
	w, err := s.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	s.stdin = w
	var lw *lease.Writer
	var reads <-chan struct{}
	var stopReads func()
	if c.protocol {
		// As loki-supervise does: the first lease and the watch for the
		// init's baseline read exist before the init.
		if lw, err = lease.NewWriter(s.control); err != nil {
			return nil, err
		}
		reads, stopReads = lease.WatchReads(s.control)
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	if c.protocol {
		s.renewed.Add(1)
		go s.renew(lw, reads, stopReads)
		w.Write(prelude)
	}
	return s, nil
}

// renew is the host's renewer, on loki-supervise's schedule
// (lease.Schedule): at once when the init has read its baseline lease
// (lease.WatchReads, once; the writer has that renewal staged, so it is a
// bare rename), backing off until then, then every second, the production
// cadence. Renewing back to back instead would keep the disk flushing, and
// every other metadata update of the file system waiting on the journal,
// under the session being measured.
func (s *session) renew(w *lease.Writer, reads <-chan struct{}, stopReads func()) {
	defer s.renewed.Done()
	defer w.Close()
	defer stopReads()
	sched := lease.NewSchedule(lease.Timing{Duration: lease.DefaultDuration, Renew: lease.DefaultRenew, Poll: pid1.DefaultPollInterval},
		time.Now(), reads != nil)
	sched.Run(s.stop, reads, stopReads, func() {
		if w.Renew() == nil {
			s.renewals.Add(1)
		}
	})
}

func (s *session) wait() error {
	err := s.cmd.Wait()
	s.exited = time.Now()
	close(s.stop)
	s.renewed.Wait()
	s.stdin.Close()
	if s.control != "" {
		os.RemoveAll(s.control)
	}
	return err
}

// interleaved is each contender's median of runs measurements, taken one
// of each contender per round, so a burst of load on a shared machine
// lands on every column alike instead of on whichever contender it met.
// A contender whose measurement fails (the measurement says why), or that
// does not take part (errSkipped), gets -1, shown as n/a.
func interleaved(cs []contender, runs int, measure func(contender) (float64, error)) []float64 {
	ds := make([][]float64, len(cs))
	failed := make([]bool, len(cs))
	for r := 0; r < runs; r++ {
		for i, c := range cs {
			if failed[i] {
				continue
			}
			v, err := measure(c)
			if err != nil {
				failed[i] = true
				continue
			}
			ds[i] = append(ds[i], v)
		}
	}
	out := make([]float64, len(cs))
	for i, d := range ds {
		if out[i] = median(d); failed[i] {
			out[i] = -1
		}
	}
	return out
}

// errSkipped marks a contender that does not take part in a measurement.
var errSkipped = errors.New("not measured for this contender")

// startToExit is one session of /bin/true, in milliseconds up to the
// init's exit: the host's renewer winding down is not the init's time.
// A peer that fails is reported but still timed; a session that cannot
// start is an error.
func startToExit(c contender) (float64, error) {
	if c.hop != "" {
		return 0, errSkipped
	}
	start := time.Now()
	s, err := startSession(c, []string{"/bin/true"}, io.Discard, false)
	if err != nil {
		fmt.Fprintf(os.Stderr, "initbench: %s: %v\n", c.name, err)
		return 0, err
	}
	if err := s.wait(); err != nil {
		fmt.Fprintf(os.Stderr, "initbench: %s /bin/true: %v\n", c.name, err)
	}
	return float64(s.exited.Sub(start).Microseconds()) / 1000, nil
}

// placement says where a throughput run's processes may run. On a 2-vCPU
// VM a pipe between two CPUs is several times slower than within one, so
// the free figure mostly measures cross-CPU wakeups; the pinned rows show
// the cost of the work itself.
type placement struct {
	name      string // for -placements
	label     string
	pinInit   bool   // taskset -c 0 on unshare: the init and the peer
	readerCPU string // taskset -c for the host's reader ("" = free)
}

var placements = []placement{
	{name: "free", label: "stdout MiB/s (free)"},
	{name: "cpu0", label: "stdout MiB/s (taskset -c 0, all)", pinInit: true, readerCPU: "0"},
	{name: "init-cpu0", label: "stdout MiB/s (init+peer on CPU 0)", pinInit: true},
	{name: "split", label: "stdout MiB/s (init+peer CPU 0, dd CPU 1)", pinInit: true, readerCPU: "1"},
}

// cpuLabel names the row of the CPU time a placement's transfers cost.
func (p placement) cpuLabel() string {
	return "stdout CPU ms/GiB, peer+init (" + p.name + ")"
}

// throughputs is each contender's median MiB/s over runs transfers of n
// bytes of the peer's stdout through it to a dd reader (readerCmd), and
// the median CPU time the peer and the init (or the hop) spent per GiB.
// On a 2-vCPU VM a single transfer's rate depends on where the scheduler
// put its processes (up to 2x between runs), hence medians of interleaved
// rounds. The CPU row shows where a hop's cost lands: a peer whose pipe
// is drained by splice allocates a fresh page for every write (a pipe
// read by read(2) recycles its pages), so the peer itself runs slower.
func throughputs(cs []contender, n int64, p placement, runs int) (rates, cpus []float64) {
	cpu := make([][]float64, len(cs))
	index := map[string]int{}
	for i, c := range cs {
		index[c.name] = i
	}
	rates = interleaved(cs, runs, func(c contender) (float64, error) {
		r, ms := transfer(c, n, p)
		if r < 0 {
			return 0, errors.New("transfer failed")
		}
		cpu[index[c.name]] = append(cpu[index[c.name]], ms/(float64(n)/(1<<30)))
		return r, nil
	})
	cpus = make([]float64, len(cs))
	for i, d := range cpu {
		cpus[i] = median(d)
	}
	return rates, cpus
}

// median of d, -1 (n/a) when d is empty.
func median(d []float64) float64 {
	if len(d) == 0 {
		return -1
	}
	sort.Float64s(d)
	return d[len(d)/2]
}

// cpuMS is the user+system time of a collected process, its collected
// descendants included (an init's peer: the init reaped it).
func cpuMS(ps *os.ProcessState) float64 {
	if ps == nil {
		return 0
	}
	return float64((ps.UserTime() + ps.SystemTime()).Microseconds()) / 1000
}

// transfer is one run: MiB/s (-1 on failure) and the CPU milliseconds the
// session (unshare, the init, the peer) or the hop and its peer spent.
func transfer(c contender, n int64, p placement) (float64, float64) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return -1, 0
	}
	reader := readerCmd(pr, p.readerCPU)
	start := time.Now()
	if err := reader.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "initbench: reader: %v\n", err)
		return -1, 0
	}
	pr.Close()
	peer := []string{"head", "-c", strconv.FormatInt(n, 10), "/dev/zero"}
	// finish waits for the contender once the reader is done; a session's
	// own outcome does not count here, the hop's does.
	var finish func() error
	var ms float64
	if c.hop != "" {
		var err error
		ms, err = hopTransfer(c.hop, peer, pw, p.pinInit)
		finish = func() error { return err }
	} else {
		s, err := startSession(c, peer, pw, p.pinInit)
		if err != nil {
			pw.Close()
			reader.Process.Kill()
			reader.Wait()
			return -1, 0
		}
		finish = func() error { s.wait(); ms = cpuMS(s.cmd.ProcessState); return nil }
	}
	pw.Close()
	rerr := reader.Wait()
	elapsed := time.Since(start).Seconds()
	ferr := finish()
	k := ddBytes(reader.Stderr.(*bytes.Buffer).String())
	if ferr != nil || rerr != nil || k != n {
		fmt.Fprintf(os.Stderr, "initbench: %s delivered %d of %d bytes (%v, reader: %v)\n", c.name, k, n, ferr, rerr)
		return -1, 0
	}
	return float64(n) / (1 << 20) / elapsed, ms
}

// hopTransfer runs the peer into bench/splicehop, whose stdout is out, and
// waits for both, saying the CPU milliseconds they spent; pinned puts the
// two on CPU 0, as an init and its peer.
func hopTransfer(hop string, peer []string, out *os.File, pinned bool) (float64, error) {
	pin := func(argv []string) *exec.Cmd {
		if pinned {
			argv = append([]string{"taskset", "-c", "0"}, argv...)
		}
		return exec.Command(argv[0], argv[1:]...)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	src, fwd := pin(peer), pin([]string{hop})
	src.Stdout, fwd.Stdin, fwd.Stdout, fwd.Stderr = pw, pr, out, os.Stderr
	if err := fwd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return 0, err
	}
	pr.Close()
	err = src.Run()
	pw.Close()
	if ferr := fwd.Wait(); err == nil {
		err = ferr
	}
	return cpuMS(src.ProcessState) + cpuMS(fwd.ProcessState), err
}

// readerCmd is the consumer of a throughput run: dd in 1 MiB reads, a
// separate C process like the pipe readers a real host has (a Go reader
// in this process measured mostly its own runtime: io.Copy into
// io.Discard reads 8 KiB at a time, and blocking reads hand their P
// around on every call).
func readerCmd(stdin *os.File, cpu string) *exec.Cmd {
	argv := []string{"dd", "of=/dev/null", "bs=1M"}
	if cpu != "" {
		argv = append([]string{"taskset", "-c", cpu}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = stdin
	cmd.Stderr = new(bytes.Buffer)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd
}

// ddBytes reads the byte count from dd's final report ("N bytes ...").
func ddBytes(report string) int64 {
	for _, line := range strings.Split(report, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == "bytes" {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			return n
		}
	}
	return -1
}

// idleResult is one init at idle; perRenewal is -1 for an init that is
// not renewed (no lease protocol).
type idleResult struct{ cpuMS, switches, perRenewal, threads, rssMiB float64 }

func idleAll(cs []contender, window time.Duration) []idleResult {
	out := make([]idleResult, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		if c.hop != "" {
			out[i] = idleResult{-1, -1, -1, -1, -1}
			continue
		}
		wg.Add(1)
		go func(i int, c contender) {
			defer wg.Done()
			out[i] = idleOne(c, window)
		}(i, c)
	}
	wg.Wait()
	return out
}

func idleOne(c contender, window time.Duration) idleResult {
	bad := idleResult{-1, -1, -1, -1, -1}
	secs := strconv.Itoa(int((window + 4*time.Second).Seconds()))
	s, err := startSession(c, []string{"sleep", secs}, io.Discard, false)
	if err != nil {
		return bad
	}
	defer func() {
		s.cmd.Process.Signal(syscall.SIGKILL) // the unshare we started
		s.wait()
	}()
	pid := childOf(s.cmd.Process.Pid, 5*time.Second)
	if pid <= 0 {
		return bad
	}
	time.Sleep(time.Second) // settle: handshake and peer start are not idle
	cpu0, sw0, r0 := cpuTicks(pid), switches(pid), s.renewals.Load()
	time.Sleep(window)
	cpu1, sw1, r1 := cpuTicks(pid), switches(pid), s.renewals.Load()
	threads, rss := statusField(pid, "Threads:"), statusField(pid, "VmRSS:")
	// The init itself (PID 1) is what is measured; for "bare" that is the
	// peer, so its figures are only a floor.
	perRenewal := -1.0
	if c.protocol && r1 > r0 {
		perRenewal = float64(sw1-sw0) / float64(r1-r0)
	}
	return idleResult{
		cpuMS:      float64(cpu1-cpu0) * 10, // USER_HZ is 100 on Linux
		switches:   float64(sw1-sw0) / window.Seconds(),
		perRenewal: perRenewal,
		threads:    float64(threads),
		rssMiB:     float64(rss) / 1024,
	}
}

// childOf finds the process unshare forked (the namespace's PID 1).
func childOf(parent int, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if f := statFields(pid); len(f) > 1 && f[1] == strconv.Itoa(parent) {
				return pid
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return -1
}

func statFields(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

func cpuTicks(pid int) int64 {
	f := statFields(pid)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// switches sums voluntary and involuntary context switches over all of the
// process's threads (a Go program has several).
func switches(pid int) int64 {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var n int64
	for _, t := range tasks {
		f, err := os.Open(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "voluntary_ctxt_switches:") || strings.HasPrefix(line, "nonvoluntary_ctxt_switches:") {
				v, _ := strconv.ParseInt(strings.TrimSpace(line[strings.IndexByte(line, ':')+1:]), 10, 64)
				n += v
			}
		}
		f.Close()
	}
	return n
}

func statusField(pid int, key string) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, key) {
			f := strings.Fields(line[len(key):])
			if len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				return v
			}
		}
	}
	return -1
}

// reaping runs a peer that orphans n processes (each started by a subshell
// that exits at once, so PID 1 inherits it), waits a second, and prints how
// many zombies its namespace still holds.
func reaping(c contender, n int) (float64, float64) {
	if c.hop != "" {
		return -1, -1
	}
	script := `i=0; while [ $i -lt ` + strconv.Itoa(n) + ` ]; do (/bin/true &); i=$((i+1)); done
sleep 1
grep -l '^State:[[:space:]]*Z' /proc/[0-9]*/status 2>/dev/null | wc -l`
	var out bytes.Buffer
	start := time.Now()
	s, err := startSession(c, []string{"/bin/sh", "-c", script}, &out, false)
	if err != nil {
		return -1, -1
	}
	s.wait()
	z, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		return time.Since(start).Seconds(), -1
	}
	return time.Since(start).Seconds(), float64(z)
}

// table prints metrics by contender, each cell with its ratio to tini.
type table struct {
	names []string
	rows  []string
	cells map[string][]float64
	more  map[string]bool
}

func newTable(cs []contender) *table {
	t := &table{cells: map[string][]float64{}, more: map[string]bool{}}
	for _, c := range cs {
		t.names = append(t.names, c.name)
	}
	return t
}

func (t *table) set(row string, i int, v float64, higherIsBetter bool) {
	if _, ok := t.cells[row]; !ok {
		t.rows = append(t.rows, row)
		t.cells[row] = make([]float64, len(t.names))
	}
	t.cells[row][i] = v
	t.more[row] = higherIsBetter
}

func (t *table) print(w io.Writer) {
	base := -1
	for i, n := range t.names {
		if n == "tini" {
			base = i
		}
	}
	fmt.Fprintf(w, "%-42s", "metric (ratio vs tini)")
	for _, n := range t.names {
		fmt.Fprintf(w, " %18s", n)
	}
	fmt.Fprintln(w)
	for _, r := range t.rows {
		fmt.Fprintf(w, "%-42s", r)
		for _, v := range t.cells[r] {
			cell := "n/a"
			if v >= 0 {
				cell = strconv.FormatFloat(v, 'f', precision(v), 64)
				if base >= 0 && t.cells[r][base] > 0 {
					cell += fmt.Sprintf(" (%.2f)", v/t.cells[r][base])
				}
			}
			fmt.Fprintf(w, " %18s", cell)
		}
		fmt.Fprintln(w)
	}
}

func precision(v float64) int {
	switch {
	case v >= 100:
		return 0
	case v >= 10:
		return 1
	}
	return 2
}
