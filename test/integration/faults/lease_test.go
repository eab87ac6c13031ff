//go:build linux

package faults

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/testutil"
	"github.com/loki-sh/loki/internal/testutil/backends"
)

// Lease timing of these tests: short enough for CI, with a slack that
// absorbs a heavily loaded machine.
const (
	leaseDur = 2 * time.Second
	poll     = 100 * time.Millisecond
	slack    = 5 * time.Second
)

// tamperScript is the peer's attack on its own lease: every way an
// unprivileged root peer could change, replace or uncover the lease file
// or its directory. It prints "TAMPERED <how>" for every attempt that
// succeeded, then keeps trying to renew the lease itself.
const tamperScript = `ctl=$(tr '\0' '\n' </proc/1/cmdline | tail -n 1)
lease="$ctl/lease"
[ -f "$lease" ] && [ -n "$(cat "$lease")" ] && echo VISIBLE
try() { how=$1; shift; if "$@" 2>/dev/null; then echo "TAMPERED $how"; fi; }
spare=$(mktemp -d)
printf 87654321 > "$spare/new"
try write sh -c 'printf 12345678 > "$1"' - "$lease"
try append sh -c 'printf x >> "$1"' - "$lease"
try truncate truncate -s 0 "$lease"
try unlink rm "$lease"
try rename mv -T "$lease" "$ctl/old"
try replace mv -T "$spare/new" "$lease"
try hardlink-in ln "$spare/new" "$ctl/lease2"
try hardlink-out ln "$lease" "$ctl/../lease-alias"
try symlink ln -s /dev/null "$ctl/sym"
try chmod chmod 0666 "$lease"
try chown chown 65534 "$lease"
try utimes touch -d @0 "$lease"
try mkdir mkdir "$ctl/d"
try chmod-dir chmod 0777 "$ctl"
try rename-dir mv -T "$ctl" "$ctl.moved"
try rmdir rmdir "$ctl"
try remount-rw mount -o remount,rw "$ctl"
try bind-over mount --bind "$spare" "$ctl"
try tmpfs-over mount -t tmpfs none "$ctl"
try umount umount "$ctl"
try umount-lazy umount -l "$ctl"
try userns-umount unshare -Urm sh -c 'umount "$1" && printf 99999999 > "$1/lease"' - "$ctl"
try userns-remount unshare -Urm sh -c 'mount -o remount,rw "$1" && printf 99999999 > "$1/lease"' - "$ctl"
echo TAMPER_DONE
i=0
while :; do
  i=$((i+1))
  { printf '%08d' $i > "$lease"; } 2>/dev/null && echo RENEWED
  sleep 0.05
done`

// TestPeerCannotTamperWithLease: from inside a namespace-backend session,
// every attempt on the lease file and its directory fails, and when the
// host stops renewing (SIGSTOP of loki-supervise) the session still ends
// at the lease bound although the peer keeps trying to renew it.
func TestPeerCannotTamperWithLease(t *testing.T) {
	testutil.RequireCommand(t, "unshare")
	s := startSession(t, t.TempDir(), "/bin/sh", "-c", tamperScript)
	var seen []string
	for line := s.next(t); line != "TAMPER_DONE"; line = s.next(t) {
		seen = append(seen, line)
	}
	out := strings.Join(seen, "\n")
	t.Logf("peer:\n%s", out)
	if !strings.Contains(out, "VISIBLE") {
		t.Fatalf("the peer did not find its lease (the test is blind):\n%s", out)
	}
	if strings.Contains(out, "TAMPERED") {
		t.Errorf("the peer changed its control dir:\n%s", out)
	}
	gone := s.freezeHost(t)
	t.Logf("session gone %v after the host stopped renewing (lease %v)", gone.Round(time.Millisecond), leaseDur)
	if code := s.resume(t); code != 124 {
		t.Errorf("supervisor exit %d after the lease expired, want 124", code)
	}
	if strings.Contains(s.rest(), "RENEWED") {
		t.Error("the peer renewed its own lease")
	}
}

// session is one running `loki-supervise session` (namespace backend).
type session struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	done   chan struct{}
	code   int
	init   int    // host pid of the session's loki-init
	ns     string // its PID namespace
	mu     sync.Mutex
	others []string
	stderr bytes.Buffer
}

func startSession(t *testing.T, controlRoot string, peer ...string) *session {
	t.Helper()
	args := append([]string{"session"}, backends.Get("namespace").Flags(t, backends.Busybox)...)
	args = append(args, "--init", testutil.Binary(t, "loki-init"), "--control-root", controlRoot,
		"--lease-duration", leaseDur.String(), "--renew-interval", "200ms", "--poll-interval", poll.String(), "--")
	s := &session{cmd: exec.Command(testutil.Binary(t, "loki-supervise"), append(args, peer...)...),
		lines: make(chan string, 1024), done: make(chan struct{})}
	s.cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}
	s.cmd.Stderr = &s.stderr
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go s.read(stdout)
	t.Cleanup(s.kill)
	if !testutil.WaitUntil(wait, func() bool { s.init, s.ns = initOf(s.cmd.Process.Pid); return s.init > 0 }) {
		t.Fatal("the session's loki-init never appeared")
	}
	return s
}

func (s *session) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		select {
		case s.lines <- sc.Text():
		default: // a flood of lines nobody waits for: keep the count low
			s.mu.Lock()
			s.others = append(s.others, sc.Text())
			s.mu.Unlock()
		}
	}
	s.code = testutil.ExitCode(s.cmd.Wait())
	close(s.lines)
	close(s.done)
}

// next returns the peer's next stdout line, bounded.
func (s *session) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			t.Fatal("the session's output ended early")
		}
		return l
	case <-time.After(wait):
		t.Fatalf("no output line within %v", wait)
		return ""
	}
}

// rest drains what the peer printed so far.
func (s *session) rest() string {
	var b strings.Builder
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				s.mu.Lock()
				defer s.mu.Unlock()
				return b.String() + strings.Join(s.others, "\n")
			}
			b.WriteString(l + "\n")
		default:
			s.mu.Lock()
			defer s.mu.Unlock()
			return b.String() + strings.Join(s.others, "\n")
		}
	}
}

// freezeHost stops loki-supervise (renewals stop, its pipes stay open) and
// waits for the namespace to end: not before half the lease, and within
// lease + poll + slack. It returns how long that took.
func (s *session) freezeHost(t *testing.T) time.Duration {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	empty := func() bool { return len(testutil.LiveNamespacePIDs(s.ns)) == 0 }
	if testutil.WaitUntil(leaseDur/2, empty) {
		t.Fatalf("session ended %v after the stop, before its lease could expire", time.Since(stopped))
	}
	bound := leaseDur + poll + slack
	if !testutil.WaitUntil(bound, empty) {
		t.Fatalf("session still alive %v after its host stopped renewing: %v", bound, testutil.LiveNamespacePIDs(s.ns))
	}
	return time.Since(stopped)
}

// resume continues a frozen supervisor and returns its exit code.
func (s *session) resume(t *testing.T) int {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGCONT)
	s.stdin.Close()
	select {
	case <-s.done:
		return s.code
	case <-time.After(wait):
		t.Fatalf("supervisor did not exit within %v", wait)
		return -1
	}
}

// kill ends the session: its loki-init (PID 1 of the namespace this test
// made, so the namespace goes with it) and the supervisor (our child).
func (s *session) kill() {
	if s.init > 0 && testutil.PIDNamespace(s.init) == s.ns {
		syscall.Kill(s.init, syscall.SIGKILL)
	}
	s.cmd.Process.Signal(syscall.SIGCONT)
	s.cmd.Process.Kill()
	s.stdin.Close()
	select {
	case <-s.done:
	case <-time.After(wait):
	}
}

// initOf finds the child of the supervisor that lives in another PID
// namespace: the session's loki-init.
func initOf(sup int) (int, string) {
	own := testutil.PIDNamespace(sup)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := procid.Stat(pid)
		if err != nil || st.PPID != sup {
			continue
		}
		if ns := testutil.PIDNamespace(pid); ns != "" && ns != own {
			return pid, ns
		}
	}
	return 0, ""
}
