//go:build linux

package session

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/testutil"
	"github.com/loki-sh/loki/internal/testutil/backends"
)

// backend is a row of the shared table (testutil/backends) with what
// this suite knows of it.
type backend struct {
	backends.Backend
	suiteFacts
}

// suiteFacts are a row's answers to this suite's questions; a row with
// none runs every scenario, and HostileSyscalls fails until it names its
// hostileFlags.
type suiteFacts struct {
	leaseOnly []string // flags that leave the lease as the only link to the supervisor
	// cannot names the suite's scenarios this backend cannot run, with
	// the reason (runBackendSuite reports each as a skip).
	cannot map[string]string
	// hostileFlags are the ways HostileSyscalls runs the peer (each a set of
	// flags): every user the backend can give it.
	hostileFlags [][]string
}

var (
	userNobody = []string{"--user", "65534:65534"}
	usernsHost = []string{"--userns", "host"}
)

const (
	noEngine = "no engine of its own to stop it: loki-supervise's own stop is the Signals scenario"
	noLease  = "no loki-init and no lease: the peer is the supervisor's child, ended with it"
)

var facts = map[string]suiteFacts{
	"namespace": {leaseOnly: []string{"--no-parent-death-signal"},
		cannot:       map[string]string{"EngineStop": noEngine},
		hostileFlags: [][]string{nil, usernsHost, userNobody}},
	"oci-crun": {cannot: map[string]string{"EngineStop": "`crun kill` is what loki-supervise sends itself (the Signals scenario)"},
		hostileFlags: [][]string{usernsHost, userNobody, nil}},
	// runc 1.1 cannot idmap the writable bind of a private user namespace
	// (docs/confinement.md): no default user for its hostile peer.
	"oci-runc": {cannot: map[string]string{"EngineStop": "`runc kill` is what loki-supervise sends itself (the Signals scenario)"},
		hostileFlags: [][]string{usernsHost, userNobody}},
	"docker": {hostileFlags: [][]string{nil, userNobody}},
	"none": {cannot: map[string]string{
		"EngineStop":         noEngine,
		"SupervisorKill9":    noLease,
		"SupervisorStopped":  noLease,
		"ControlDirReadOnly": "no control dir: nothing is shared with the peer",
		"SiblingsHidden":     "no control dir, no namespace: the peer sees what the supervisor's user sees",
		"HostileSyscalls":    "no loki-init, no filter: the peer runs as the supervisor's own child, with its user's rights",
		"HostSockets":        "no namespace: the peer reaches what the supervisor's user does",
	}},
}

// get is the row called name with this suite's facts.
func get(name string) backend { return backend{backends.Get(name), facts[name]} }

// relayBackends are those whose stdio, exit codes and signals are tested:
// every row a root supervisor runs (the unprivileged one is
// SiblingsHidden's setups' and the confine suite's).
func relayBackends() []backend {
	var out []backend
	for _, r := range backends.All() {
		if !r.Unprivileged {
			out = append(out, get(r.Name))
		}
	}
	return out
}

// rootfs is the shared busybox root filesystem (testutil.BusyboxRootfs).
func rootfs(t *testing.T) string { return testutil.BusyboxRootfs(t) }

func TestMain(m *testing.M) { testutil.Main(m) }

// supervise returns a command running loki-supervise session with the
// backend's flags, the built loki-init, extra flags, and the peer's argv.
func supervise(t *testing.T, b backend, flags []string, peer ...string) *exec.Cmd {
	t.Helper()
	bflags := b.Flags(t, backends.Busybox)
	sup := testutil.Binary(t, "loki-supervise")
	init := testutil.Binary(t, "loki-init")
	args := append([]string{"session", "--init", init}, bflags...)
	args = append(args, flags...)
	args = append(args, "--")
	args = append(args, peer...)
	cmd := exec.Command(sup, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd
}

// result is a finished supervisor run.
type result struct {
	code           int
	stdout, stderr string
}

// run runs cmd with stdin and a generous bound, and returns its outcome.
func run(t *testing.T, cmd *exec.Cmd, stdin string, timeout time.Duration) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatalf("start loki-supervise: %v", err)
	}
	code := testutil.WaitExit(t, cmd, timeout)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// startPiped starts cmd with a pipe to its stdin, its stdout read by
// lines, and its stderr kept (read it after cmd has been waited for).
func startPiped(t *testing.T, cmd *exec.Cmd) (io.WriteCloser, *lineReader, *bytes.Buffer) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, newLineReader(stdout), stderr
}

// lineReader reads lines from a pipe with a deadline per line.
type lineReader struct {
	lines chan string
	errs  chan error
}

func newLineReader(r io.Reader) *lineReader {
	lr := &lineReader{lines: make(chan string, 64), errs: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lr.lines <- sc.Text()
		}
		lr.errs <- io.EOF
		close(lr.lines)
	}()
	return lr
}

func (lr *lineReader) next(t *testing.T, timeout time.Duration) string {
	t.Helper()
	select {
	case l, ok := <-lr.lines:
		if !ok {
			t.Fatal("output ended before the expected line")
		}
		return l
	case <-time.After(timeout):
		t.Fatalf("no output line within %v", timeout)
		return ""
	}
}

// descendants returns the identities of every live descendant of pid,
// found through the host's /proc.
func descendants(pid int) []procid.Identity {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := procid.Stat(p); err == nil {
			children[st.PPID] = append(children[st.PPID], p)
		}
	}
	var out []procid.Identity
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if id, err := procid.Capture(c); err == nil {
				out = append(out, id)
			}
			queue = append(queue, c)
		}
	}
	return out
}
