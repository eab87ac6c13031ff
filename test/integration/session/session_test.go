//go:build linux

package session

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/testutil"
)

const generous = 90 * time.Second

// The backend conformance suite: every row of the shared backend table
// (testutil/backends) runs the same scenarios (the pattern of
// containerd's snapshotter suite). A backend that cannot do a scenario
// says so in its cannot map, with the reason, and the subtest reports it
// as a skip: never silently.
func TestBackend(t *testing.T) {
	for _, b := range relayBackends() {
		t.Run(b.Name, func(t *testing.T) { runBackendSuite(t, b) })
	}
}

// scenarios, in the order they run.
var scenarios = []struct {
	name string
	run  func(t *testing.T, b backend)
}{
	{"ExitCodes", scenarioExitCodes},
	{"RelayByteExact", scenarioRelayByteExact},
	{"InteractiveRounds", scenarioInteractiveRounds},
	{"EnvAllowlist", scenarioEnvAllowlist},
	{"Signals", scenarioSignals},
	{"EngineStop", scenarioEngineStop},
	{"SupervisorKill9", scenarioSupervisorKill9},
	{"SupervisorStopped", scenarioSupervisorStopped},
	{"ControlDirReadOnly", scenarioControlDirReadOnly},
	{"SiblingsHidden", scenarioSiblingsHidden},
	{"HostileEgress", scenarioHostileEgress},
	{"HostileSyscalls", scenarioHostileSyscalls},
	{"HostSockets", scenarioHostSockets},
	{"TmpFull", scenarioTmpFull},
}

// runBackendSuite runs every scenario against b. A scenario the backend
// declares it cannot run is not started (and logged with the reason), so
// a CI run shows no skipped test; a declaration naming no scenario fails.
func runBackendSuite(t *testing.T, b backend) {
	known := map[string]bool{}
	for _, sc := range scenarios {
		known[sc.name] = true
		if reason, ok := b.cannot[sc.name]; ok {
			t.Logf("%s: %s cannot: %s", sc.name, b.Name, reason)
			continue
		}
		t.Run(sc.name, func(t *testing.T) { sc.run(t, b) })
	}
	for name := range b.cannot {
		if !known[name] {
			t.Errorf("%s declares it cannot run %q, which is no scenario of the suite", b.Name, name)
		}
	}
}

// readyLine is the shell command that prints the line naming the session:
// its PID namespace and hostname (for docker, the container's short id).
const readyLine = `echo "ready $(readlink /proc/self/ns/pid) $(cat /proc/sys/kernel/hostname)"`

// readyScript puts readyLine in place of READY in script, or first when
// the script has none (a trap must come before it: the test signals as
// soon as it reads the line).
func readyScript(script string) string {
	if strings.Contains(script, "READY") {
		return strings.Replace(script, "READY", readyLine, 1)
	}
	return readyLine + "; " + script
}

// ready is the parsed first line of readyScript.
type ready struct{ ns, host string }

func readReady(t *testing.T, lines *lineReader) ready {
	t.Helper()
	line := lines.next(t, 60*time.Second)
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "ready" {
		t.Fatalf("peer said %q", line)
	}
	return ready{ns: f[1], host: f[2]}
}

// sessionProcs returns a function listing the session's live processes:
// its PID namespace's members for a backend that makes one (its
// processes need not be the supervisor's descendants: docker's are the
// daemon's), else the supervisor's descendants.
func sessionProcs(t *testing.T, b backend, supervisor int, r ready) func() []procid.Identity {
	t.Helper()
	if !b.Init() {
		return func() []procid.Identity { return testutil.Alive(descendants(supervisor)) }
	}
	if r.ns == "" || r.ns == testutil.PIDNamespace(os.Getpid()) {
		t.Fatalf("the peer is not in a PID namespace of its own (%q)", r.ns)
	}
	return func() []procid.Identity {
		var ids []procid.Identity
		for _, pid := range testutil.LiveNamespacePIDs(r.ns) {
			if id, err := procid.Capture(pid); err == nil {
				ids = append(ids, id)
			}
		}
		return ids
	}
}

// gone waits until nothing of the session is left: no process, and for
// docker no container in any state (docker ps -a).
func gone(b backend, procs func() []procid.Identity, r ready, bound time.Duration) bool {
	return testutil.WaitUntil(bound, func() bool {
		return len(procs()) == 0 && (!(b.Isolation == "docker") || !containerExists(r.host))
	})
}

// scenarioExitCodes: the session exits with the peer's code; a peer killed
// by a signal is a failed run (125).
func scenarioExitCodes(t *testing.T, b backend) {
	cases := []struct {
		name   string
		script string
		want   int
	}{
		{"success", "exit 0", 0},
		{"peer code", "exit 7", 7},
		{"highest code", "exit 255", 255},
		{"code 124 from the peer itself", "exit 124", 124},
		{"code 137 from the peer itself", "exit 137", 137},
		{"peer killed by a signal", "kill -9 $$", 125},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, supervise(t, b, nil, "sh", "-c", tc.script), "", generous)
			if r.code != tc.want {
				t.Fatalf("exit %d, want %d (stderr %q)", r.code, tc.want, r.stderr)
			}
		})
	}
}

// scenarioRelayByteExact pushes 32 MiB of random bytes through stdin; the
// peer copies them to both stdout and stderr. Both streams must come back
// identical to the input, which also proves they are not mixed.
func scenarioRelayByteExact(t *testing.T, b backend) {
	const size = 32 << 20
	input := make([]byte, size)
	if _, err := rand.Read(input); err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(input)
	cmd := supervise(t, b, nil, "sh", "-c", "tee /proc/self/fd/2")
	cmd.Stdin = bytes.NewReader(input)
	outH, errH := &countingHash{h: sha256.New()}, &countingHash{h: sha256.New()}
	cmd.Stdout, cmd.Stderr = outH, errH
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := testutil.WaitExit(t, cmd, 3*generous); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for name, got := range map[string]*countingHash{"stdout": outH, "stderr": errH} {
		if got.n != size || !bytes.Equal(got.h.Sum(nil), want[:]) {
			t.Errorf("%s: %d bytes, sha256 %x; want %d bytes, %x", name, got.n, got.h.Sum(nil), size, want)
		}
	}
}

type countingHash struct {
	h interface {
		io.Writer
		Sum([]byte) []byte
	}
	n int
}

func (c *countingHash) Write(p []byte) (int, error) { c.n += len(p); return c.h.Write(p) }

// scenarioInteractiveRounds: a JSON-RPC style exchange, one request line
// in and one response line out per round, with the next request sent only
// after the response arrived: any buffering on the way would stall it.
func scenarioInteractiveRounds(t *testing.T, b backend) {
	server := `while IFS= read -r line; do echo "{\"jsonrpc\":\"2.0\",\"result\":$line}"; done`
	cmd := supervise(t, b, nil, "sh", "-c", server)
	stdin, lines, stderr := startPiped(t, cmd)
	for i := 1; i <= 8; i++ {
		req := fmt.Sprintf(`{"id":%d,"method":"ping"}`, i)
		if _, err := io.WriteString(stdin, req+"\n"); err != nil {
			t.Fatalf("round %d: write: %v", i, err)
		}
		want := `{"jsonrpc":"2.0","result":` + req + `}`
		if got := lines.next(t, 30*time.Second); got != want {
			t.Fatalf("round %d: got %q, want %q", i, got, want)
		}
	}
	stdin.Close()
	if code := testutil.WaitExit(t, cmd, generous); code != 0 {
		t.Fatalf("exit %d after stdin EOF (stderr %q)", code, stderr.String())
	}
}

// scenarioEnvAllowlist: a secret in the supervisor's environment reaches
// the agent only when named with --env; NAME=VALUE values may contain
// commas.
func scenarioEnvAllowlist(t *testing.T, b backend) {
	const secret = "LOKI_TEST_SECRET=s3cr3t-value"
	cases := []struct {
		name    string
		flags   []string
		present []string
		absent  []string
	}{
		{"default set only", nil, []string{"PATH=", "HOME="}, []string{"LOKI_TEST_SECRET", "s3cr3t-value"}},
		{"named secret passes", []string{"--env", "LOKI_TEST_SECRET"}, []string{secret}, nil},
		{"explicit value with a comma", []string{"--env", "FOO=a,b"}, []string{"FOO=a,b"}, []string{"LOKI_TEST_SECRET"}},
		{"no defaults", []string{"--no-default-env", "--env", "FOO=1"}, []string{"FOO=1"}, []string{"HOME=", "LOKI_TEST_SECRET"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := supervise(t, b, tc.flags, "/bin/sh", "-c", "env")
			cmd.Env = append(cmd.Env, secret, "HOME=/root")
			r := run(t, cmd, "", generous)
			if r.code != 0 {
				t.Fatalf("exit %d (stderr %q)", r.code, r.stderr)
			}
			env := "\n" + r.stdout
			for _, p := range tc.present {
				if !strings.Contains(env, "\n"+p) {
					t.Errorf("agent env lacks %q:\n%s", p, r.stdout)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(env, a) {
					t.Errorf("agent env has %q:\n%s", a, r.stdout)
				}
			}
		})
	}
}

// startReady starts a session whose peer prints the ready line, with
// stdin held open, and returns the command, its ready line and stderr.
func startReady(t *testing.T, b backend, flags []string, script string) (*exec.Cmd, ready, *syncBuffer) {
	t.Helper()
	cmd := supervise(t, b, flags, "sh", "-c", readyScript(script))
	stdout, stderr := startHeld(t, cmd)
	r := readReady(t, stdout)
	if b.Isolation == "docker" {
		t.Cleanup(func() { exec.Command("docker", "rm", "-f", r.host).Run() })
	}
	return cmd, r, stderr
}

// startHeld starts cmd with its stdin held open (the session must not end
// by EOF), its stdout read line by line and its stderr kept; the test's
// cleanup kills it (our own child, a no-op once waited for), continuing
// it first in case a scenario stopped it.
func startHeld(t *testing.T, cmd *exec.Cmd) (*lineReader, *syncBuffer) {
	t.Helper()
	cmd.WaitDelay = 10 * time.Second // a docker CLI left behind must not hold Wait
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
	})
	return newLineReader(stdout), stderr
}

// scenarioSignals: SIGTERM to the supervisor is forwarded; a peer that
// exits on it decides the code; a peer it ends gives 128+15 with one
// line (as a Ctrl-C gives 130); a peer that ignores it is killed after
// --stop-timeout and the code is 128+15; nothing of the session survives.
func scenarioSignals(t *testing.T, b backend) {
	cases := []struct {
		name   string
		script string
		flags  []string
		want   int
		line   string // on stderr, for a peer the forwarded signal ended
	}{
		{"peer exits on TERM", `trap 'exit 42' TERM; READY; while :; do sleep 0.1; done`, nil, 42, ""},
		{"peer ignores TERM", `trap '' TERM; READY; while :; do sleep 0.1; done`,
			[]string{"--grace", "60s", "--stop-timeout", "2s"}, 128 + 15, ""},
		{"peer ended by TERM", `READY; exec sleep 1000`, nil, 128 + 15, "SIGTERM was forwarded to it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd, r, stderr := startReady(t, b, tc.flags, tc.script)
			procs := sessionProcs(t, b, cmd.Process.Pid, r)
			session := procs()
			if len(session) == 0 {
				t.Fatal("no process of the session found: the check below would be blind")
			}
			t.Cleanup(func() { testutil.KillLeftovers(session) })
			cmd.Process.Signal(syscall.SIGTERM)
			if code := testutil.WaitExit(t, cmd, generous); code != tc.want {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.want, stderr.String())
			}
			// A forwarded signal is what happened, not a refusal.
			// One line: the forwarding note waits for a session that
			// does not end at once (before: the note, then the init's
			// line, and 125).
			if tc.line != "" && (!strings.Contains(stderr.String(), tc.line) || strings.Contains(stderr.String(), "refused") || strings.Count(stderr.String(), "\n") != 1) {
				t.Fatalf("stderr %q: want one line with %q and no refusal", stderr.String(), tc.line)
			}
			if !gone(b, procs, r, 30*time.Second) {
				t.Fatalf("left behind: %v (container %s exists: %v)", procs(), r.host, (b.Isolation == "docker") && containerExists(r.host))
			}
		})
	}
}

// scenarioEngineStop: the engine's own stop (docker stop) sends loki-init
// SIGTERM, which reaches the peer; past the stop timeout the engine kills
// loki-init, which is a failed session (125) with its line.
func scenarioEngineStop(t *testing.T, b backend) {
	cases := []struct {
		name, script string
		want         int
		line         string
	}{
		{"peer exits on TERM", `trap 'exit 42' TERM; READY; while :; do sleep 0.1; done`, 42, ""},
		{"peer ignores TERM", `trap '' TERM; READY; while :; do sleep 0.1; done`, 125, "session ended by signal 9"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd, r, stderr := startReady(t, b, []string{"--grace", "60s"}, tc.script)
			if out, err := exec.Command("docker", "stop", "-t", "2", r.host).CombinedOutput(); err != nil {
				t.Fatalf("docker stop: %v %s", err, out)
			}
			if code := testutil.WaitExit(t, cmd, generous); code != tc.want || !strings.Contains(stderr.String(), tc.line) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tc.want, tc.line)
			}
			if !gone(b, sessionProcs(t, b, cmd.Process.Pid, r), r, 30*time.Second) {
				t.Fatalf("container %s left behind", r.host)
			}
		})
	}
}

// scenarioSupervisorKill9 orphans a running session by SIGKILL of
// loki-supervise and proves that every process of the session (init,
// peer, background children) is gone within the lease duration plus one
// poll, with slack for a loaded machine, and for docker that the
// container is gone too. The parent-death signal is off where there is
// one, and stdin EOF does not end the session, so that only the lease can
// end it.
func scenarioSupervisorKill9(t *testing.T, b backend) {
	const (
		leaseDur = 2 * time.Second
		poll     = 100 * time.Millisecond
		slack    = 4 * time.Second
	)
	// --wait-after-eof: the supervisor's death closes the init's stdin,
	// which would end the session 1 s later by itself.
	// A control root of its own: any later session in a shared root
	// (another test's, on this machine) sweeps a dead owner's session and
	// kills its cgroup at once, which is not the lease.
	root := privateDir(t, t.TempDir(), "ctl", 0)
	flags := append([]string{"--lease-duration", leaseDur.String(), "--renew-interval", "200ms", "--poll-interval", poll.String(),
		"--wait-after-eof", "--control-root", root}, b.leaseOnly...)
	cmd, r, _ := startReady(t, b, flags, `sleep 1000 & sleep 1000 & wait`)
	procs := sessionProcs(t, b, cmd.Process.Pid, r)
	var session []procid.Identity
	if !testutil.WaitUntil(10*time.Second, func() bool { session = procs(); return len(sleepers(session)) == 2 }) {
		t.Fatalf("the two background sleeps were not found among %v", session)
	}
	t.Cleanup(func() { testutil.KillLeftovers(session) })
	cmd.Process.Signal(syscall.SIGKILL)
	// Process.Wait, not cmd.Wait: a docker CLI still holds the stdout
	// pipe, and waiting for it would wait for the session's end.
	cmd.Process.Wait()
	killedAt := time.Now()
	time.Sleep(300 * time.Millisecond)
	if len(testutil.Alive(session)) == 0 {
		t.Fatal("session vanished at once: not the lease")
	}
	bound := leaseDur + poll + slack
	if !gone(b, procs, r, bound) {
		t.Fatalf("after %v still alive: %v (container %s exists: %v)", bound, procs(), r.host, (b.Isolation == "docker") && containerExists(r.host))
	}
	t.Logf("session gone %v after kill -9 (lease %v)", time.Since(killedAt).Round(time.Millisecond), leaseDur)
}

// sleepers picks the peer's background "sleep 1000" processes.
func sleepers(ids []procid.Identity) []procid.Identity {
	var out []procid.Identity
	for _, id := range ids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", id.PID()))
		if strings.HasPrefix(string(cmdline), "sleep\x001000") {
			out = append(out, id)
		}
	}
	return out
}

// scenarioSupervisorStopped freezes loki-supervise with SIGSTOP: its pipes
// stay open, only the renewals stop. The session must end by lease expiry
// (not earlier than half the lease, and within lease + poll + slack), and
// once resumed the supervisor reports the init's verdict, 124.
func scenarioSupervisorStopped(t *testing.T, b backend) {
	const (
		leaseDur = 2 * time.Second
		poll     = 100 * time.Millisecond
		slack    = 4 * time.Second
	)
	flags := []string{"--lease-duration", leaseDur.String(), "--renew-interval", "200ms", "--poll-interval", poll.String()}
	cmd, r, stderr := startReady(t, b, flags, "sleep 1000 & wait")
	procs := sessionProcs(t, b, cmd.Process.Pid, r)
	var session []procid.Identity
	if !testutil.WaitUntil(10*time.Second, func() bool { session = procs(); return len(sleepers(session)) == 1 }) {
		t.Fatalf("background sleep not found among %v", session)
	}
	t.Cleanup(func() { testutil.KillLeftovers(session) })
	cmd.Process.Signal(syscall.SIGSTOP)
	stoppedAt := time.Now()
	if testutil.WaitUntil(leaseDur/2, func() bool { return len(testutil.Alive(sleepers(session))) == 0 }) {
		t.Fatalf("session ended %v after the stop, before the lease could expire", time.Since(stoppedAt))
	}
	bound := leaseDur + poll + slack
	if !testutil.WaitUntil(bound, func() bool { return len(testutil.Alive(sleepers(session))) == 0 }) {
		t.Fatalf("still alive %v after renewals stopped: %v", bound, testutil.Alive(session))
	}
	t.Logf("session gone %v after renewals stopped (lease %v)", time.Since(stoppedAt).Round(time.Millisecond), leaseDur)
	cmd.Process.Signal(syscall.SIGCONT)
	if code := testutil.WaitExit(t, cmd, generous); code != 124 {
		t.Fatalf("supervisor exit %d after the lease expired, want 124", code)
	}
	// The init's 124 is silent; the supervisor says what happened.
	if !strings.Contains(stderr.String(), "loki-supervise: the lease expired: it was not renewed for") {
		t.Fatalf("stderr %q: want the lease-expired line", stderr.String())
	}
}

// scenarioControlDirReadOnly: the peer, root in its namespace, finds the
// control dir through PID 1's argv and tries to write the lease, remount
// it read-write and unmount it; all fail, and it has no capability at all.
func scenarioControlDirReadOnly(t *testing.T, b backend) {
	script := `ctl=$(tr '\0' '\n' </proc/1/cmdline | tail -n 1)
echo "ctl=$ctl"
[ -f "$ctl/lease" ] && echo LEASE_VISIBLE
echo x > "$ctl/lease" && echo WROTE
echo x > "$ctl/other" && echo CREATED
mount -o remount,rw "$ctl" && echo REMOUNTED
umount "$ctl" && echo UNMOUNTED
grep -E '^Cap(Eff|Prm|Inh|Amb):' /proc/self/status
exit 0`
	r := run(t, supervise(t, b, nil, "/bin/sh", "-c", script), "", generous)
	if r.code != 0 {
		t.Fatalf("exit %d (stderr %q)", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "LEASE_VISIBLE") {
		t.Fatalf("the probe did not find the lease file (test is blind): %s", r.stdout)
	}
	for _, bad := range []string{"WROTE", "CREATED", "REMOUNTED", "UNMOUNTED"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("peer %s the control dir:\n%s", strings.ToLower(bad), r.stdout)
		}
	}
	for _, set := range []string{"CapEff", "CapPrm", "CapInh", "CapAmb"} {
		if !strings.Contains(r.stdout, set+":\t0000000000000000") {
			t.Errorf("%s is not empty:\n%s", set, r.stdout)
		}
	}
}

// scenarioSiblingsHidden runs the sibling-session intrusions of every
// setup of this backend (siblings_test.go).
func scenarioSiblingsHidden(t *testing.T, b backend) {
	n := 0
	for _, s := range siblingSetups() {
		if s.backend.Name != b.Name {
			continue
		}
		n++
		t.Run(s.name, func(t *testing.T) { checkSiblings(t, s) })
	}
	if n == 0 {
		t.Fatalf("no sibling setup for %s: declare the scenario in its cannot map instead", b.Name)
	}
}

// TestParentDeathSpeedUp: with the default parent-death signal, a killed
// supervisor takes the namespace down too (well within the lease bound).
// --wait-after-eof keeps the init from ending the session at stdin's EOF,
// so only the signal can end it that soon. Every way the stage changes
// its credentials (becoming root of the private user namespace, --user)
// clears the signal, which must then be armed again.
func TestParentDeathSpeedUp(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"private userns", nil},
		{"userns host", []string{"--userns", "host"}},
		{"user", []string{"--user", "65534:65534"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := get("namespace")
			// A control root of its own: another session's sweep would
			// end this one once its supervisor is dead.
			ctlRoot := t.TempDir()
			if err := os.Chmod(filepath.Dir(ctlRoot), 0o755); err != nil { // searchable by --user
				t.Fatal(err)
			}
			flags := append([]string{"--lease-duration", "30s", "--wait-after-eof", "--control-root", ctlRoot}, tc.flags...)
			cmd := supervise(t, b, flags, "sh", "-c", "sleep 1000 & echo ready; wait")
			stdin, _ := cmd.StdinPipe()
			defer stdin.Close()
			// Held open past the supervisor's death (cmd.StdoutPipe's
			// would close with Wait): an init whose output has no reader
			// ends the session by itself.
			stdout, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdout.Close()
			cmd.Stdout = w
			err = cmd.Start()
			w.Close()
			if err != nil {
				t.Fatal(err)
			}
			if got := newLineReader(stdout).next(t, 60*time.Second); got != "ready" {
				t.Fatalf("peer said %q", got)
			}
			var session []procid.Identity
			if !testutil.WaitUntil(10*time.Second, func() bool { session = descendants(cmd.Process.Pid); return len(sleepers(session)) == 1 }) {
				t.Fatalf("background sleep not found among %v", session)
			}
			t.Cleanup(func() { testutil.KillLeftovers(session) })
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			if !testutil.WaitUntil(10*time.Second, func() bool { return len(testutil.Alive(session)) == 0 }) {
				t.Fatalf("still alive 10s after kill -9 with a 30s lease: %v", testutil.Alive(session))
			}
		})
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
