package seatbelt

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/execution/sandbox/boundary"
	"github.com/loki-sh/loki/internal/execution/sandbox/boundary/boundarytest"
	"github.com/loki-sh/loki/internal/testutil"
)

// freeLocalPort asks the kernel for a port nothing uses right now.
func freeLocalPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestPayloadChecksUnconfined runs the payload without any sandbox: each
// row makes exactly one "must be refused" check succeed and expects its
// code, proving the payload notices every kind of leak.
func TestPayloadChecksUnconfined(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(secret, nil, 0o600); err != nil { // empty still counts as read
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	heldPort := strconv.Itoa(held.Addr().(*net.TCPAddr).Port)
	freePort := strconv.Itoa(freeLocalPort(t))
	missing := filepath.Join(dir, "missing")

	for _, tc := range []struct {
		name                    string
		output, sib, sock, port string
		want                    int
	}{
		{"sibling readable", filepath.Join(dir, "o1"), secret, missing, freePort, PayloadSiblingRead},
		{"unix connect allowed", filepath.Join(dir, "o2"), missing, sock, freePort, PayloadUnixConnect},
		{"reserved bind allowed", filepath.Join(dir, "o3"), missing, missing, freePort, PayloadReservedBind},
		{"bind refused for another reason", filepath.Join(dir, "o4"), missing, missing, heldPort, PayloadBrokenAllow},
		{"output not writable", filepath.Join(missing, "o5"), missing, missing, freePort, PayloadBrokenAllow},
		{"sibling is a directory", filepath.Join(dir, "o6"), dir, missing, heldPort, PayloadBrokenAllow},
		{"bad port", filepath.Join(dir, "o7"), missing, missing, "http", PayloadUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RunPayload([]string{tc.output, tc.sib, tc.sock, tc.port}); got != tc.want {
				t.Fatalf("RunPayload = %d, want %d", got, tc.want)
			}
		})
	}
	if got := RunPayload([]string{"a", "b"}); got != PayloadUsage {
		t.Fatalf("RunPayload with 2 args = %d, want %d", got, PayloadUsage)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "o1")); err != nil || string(data) != "confined" {
		t.Fatalf("output = %q, %v; want \"confined\"", data, err)
	}
}

func selfPayload(t *testing.T) Payload {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Payload{Binary: exe, Args: []string{"seatbelt-payload"}}
}

func probeHost(b *boundarytest.Layout, sandbox string) host {
	return host{goos: "darwin", sandboxExec: sandbox, lookup: b.Lookup, probeTimeout: 60 * time.Second}
}

func leftovers(t *testing.T, root string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(root, ".seatbelt-probe-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestProbeDetectsNoConfinement: a "sandbox-exec" that applies nothing must
// make the probe fail (the payload reads the sibling), never pass.
func TestProbeDetectsNoConfinement(t *testing.T) {
	b := newBoundary(t, strconv.Itoa(freeLocalPort(t)))
	passthrough := script(t, t.TempDir(), "sandbox-exec",
		"[ \"$1\" = -f ] && [ -s \"$2\" ] || exit 64\nshift 2\nexec \"$@\"\n")
	_, err := probeHost(b, passthrough).probe(context.Background(), b.WSRoot, b.RunSh, selfPayload(t))
	if !errors.Is(err, ErrProbeFailed) || !strings.Contains(err.Error(), "exit 41") {
		t.Fatalf("probe = %v; want ErrProbeFailed with exit 41", err)
	}
	if l := leftovers(t, b.WSRoot); len(l) != 0 {
		t.Fatalf("probe left %v behind", l)
	}
}

// TestProbePassesUnderDACConfinement stands in for the kernel sandbox with
// Unix permissions: the fake sandbox-exec drops to nobody, which can write
// the (opened-up) workspace but cannot read the root-only sibling, connect
// to a root-only socket, or bind a port below 1024. The whole probe must
// then succeed and report the identity and the profile's digest.
func TestProbePassesUnderDACConfinement(t *testing.T) {
	testutil.RequireRoot(t)
	setpriv := testutil.RequireCommand(t, "setpriv")
	b := newBoundary(t, "7,9")
	// nobody must be able to reach the workspace root to run the payload.
	for d := b.WSRoot; d != "/tmp" && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	fake := script(t, t.TempDir(), "sandbox-exec", `[ "$1" = -f ] && [ -s "$2" ] || exit 64
shift 2
chmod 0777 . && chmod 0700 probe.sock || exit 65
exec `+setpriv+` --reuid=65534 --regid=65534 --clear-groups -- "$@"
`)
	if err := os.Chmod(filepath.Dir(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := probeHost(b, fake).probe(context.Background(), b.WSRoot, b.RunSh, selfPayload(t))
	if err != nil {
		t.Fatalf("probe under DAC confinement: %v", err)
	}
	id, err := boundary.IdentityOf(b.Lookup, b.WSRoot, b.RunSh)
	if err != nil {
		t.Fatal(err)
	}
	if res.Identity != id {
		t.Errorf("identity %+v, want %+v", res.Identity, id)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(res.ProbeSHA256) || res.Map()["probe_sha256"] != res.ProbeSHA256 {
		t.Errorf("probe_sha256 %q", res.ProbeSHA256)
	}
	if l := leftovers(t, b.WSRoot); len(l) != 0 {
		t.Fatalf("probe left %v behind", l)
	}
}

// TestProbeTimeoutKillsRunner: a runner that never finishes is reported as
// unfinished within the bound, and it is gone afterwards.
func TestProbeTimeoutKillsRunner(t *testing.T) {
	b := newBoundary(t, strconv.Itoa(freeLocalPort(t)))
	pidFile := filepath.Join(t.TempDir(), "pid")
	hang := script(t, t.TempDir(), "sandbox-exec", "echo $$ > "+pidFile+"\nexec sleep 600\n")
	h := probeHost(b, hang)
	h.probeTimeout = time.Second
	start := time.Now()
	_, err := h.probe(context.Background(), b.WSRoot, b.RunSh, selfPayload(t))
	if !errors.Is(err, ErrProbeUnfinished) {
		t.Fatalf("probe = %v; want ErrProbeUnfinished", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("probe took %v after a 1s timeout", d)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err := unix.Kill(pid, 0); !errors.Is(err, unix.ESRCH) {
		t.Fatalf("runner %d still exists after the timeout (kill 0: %v)", pid, err)
	}
}

func TestProbeRefusals(t *testing.T) {
	b := newBoundary(t, strconv.Itoa(freeLocalPort(t)))
	fake := script(t, t.TempDir(), "sandbox-exec", "exit 0\n")
	// Every reserved port held: the probe cannot prove a bind refusal.
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	heldEnv := *b
	heldEnv.Env = map[string]string{}
	for k, v := range b.Env {
		heldEnv.Env[k] = v
	}
	heldEnv.Env[boundary.EnvReservedPorts] = strconv.Itoa(held.Addr().(*net.TCPAddr).Port)

	for _, tc := range []struct {
		name string
		h    host
		root string
		want error
	}{
		{"linux", host{goos: "linux", sandboxExec: fake, lookup: b.Lookup}, b.WSRoot, ErrNotMacOS},
		{"no sandbox-exec", probeHost(b, filepath.Join(b.Root, "none")), b.WSRoot, ErrNoSandboxExec},
		{"workspace root missing", probeHost(b, fake), filepath.Join(b.Root, "nope"), boundary.ErrInvalid},
		{"workspace root not configured", probeHost(b, fake), filepath.Join(b.Root, "rt"), boundary.ErrInvalid},
		{"no free reserved port", probeHost(&heldEnv, fake), b.WSRoot, ErrNoFreePort},
		{"payload exits 0 without output", probeHost(b, fake), b.WSRoot, ErrProbeFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.h.probe(context.Background(), tc.root, b.RunSh, selfPayload(t))
			if !errors.Is(err, tc.want) {
				t.Fatalf("probe = %v; want %v", err, tc.want)
			}
		})
	}
}

// TestProbeRealEntryPoint: off macOS the exported Probe refuses at once.
func TestProbeRealEntryPoint(t *testing.T) {
	if _, err := os.Stat(SandboxExec); err == nil {
		t.Skip("this machine has sandbox-exec")
	}
	_, err := Probe(context.Background(), t.TempDir(), "/nonexistent/run.sh", Payload{})
	if !errors.Is(err, ErrNotMacOS) && !errors.Is(err, ErrNoSandboxExec) {
		t.Fatalf("Probe = %v; want a platform refusal", err)
	}
}
