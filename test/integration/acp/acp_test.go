//go:build linux

package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
	"github.com/loki-sh/loki/internal/testutil/backends"
)

// secret travels to the agent in its environment; it must never appear in
// anything the run prints or records.
const secret = "acp-s3cr3t-9d41e7"

// runBound bounds one client run; the client's own deadline is shorter,
// so a hang is reported by the client with its checks, not by a kill here.
const (
	clientTimeout = 30 * time.Second
	runBound      = 120 * time.Second
)

// mode is one way of placing the agent behind the client: a row of the
// shared backend table (testutil/backends).
type mode struct {
	name string
	// wrap returns the argv prefix put before `node agent.mjs`; nil means
	// the client spawns the agent itself.
	wrap func(t *testing.T) []string
}

// modes are the rows a root supervisor runs. A container row's root holds
// only mount points and the merged-/usr symlinks, with the host's /usr
// (node and its libraries) bound read-only (backends.HostUsr), and
// test/acp bound read-only at the same path, so the agent's argv is the
// same as in every other mode.
func modes() []mode {
	var out []mode
	for _, b := range backends.All() {
		if b.Unprivileged {
			continue
		}
		out = append(out, mode{b.Name, func(t *testing.T) []string {
			flags := b.Flags(t, backends.HostUsr)
			if b.Container {
				dir := acpDir(t)
				flags = append(flags, "--bind", dir+":"+dir+":ro", "--cwd", dir)
			}
			return session(t, flags...)
		}})
	}
	return out
}

// session is the loki-supervise argv prefix with the built loki-init, the
// token passed by name, and extra flags.
func session(t *testing.T, flags ...string) []string {
	t.Helper()
	args := []string{testutil.Binary(t, "loki-supervise"), "session",
		"--init", testutil.Binary(t, "loki-init"), "--env", "ACP_TEST_TOKEN"}
	args = append(args, flags...)
	return append(args, "--")
}

func acpDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(testutil.ModuleRoot(t), "test", "acp")
}

var (
	sdkOnce sync.Once
	sdkErr  error
)

// requireSDK needs node and npm and installs the locked SDK (npm ci) into
// test/acp/node_modules when it is not there yet.
func requireSDK(t *testing.T) {
	t.Helper()
	testutil.RequireCommand(t, "node")
	npm := testutil.RequireCommand(t, "npm")
	dir := acpDir(t)
	sdkOnce.Do(func() {
		marker := filepath.Join(dir, "node_modules", "@zed-industries", "agent-client-protocol", "package.json")
		if _, err := os.Stat(marker); err == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			sdkErr = fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out)
		}
	})
	if sdkErr != nil {
		t.Fatal(sdkErr)
	}
}

// summary is what client.mjs prints.
type summary struct {
	OK       bool     `json:"ok"`
	Failures []string `json:"failures"`
	ExitCode *int     `json:"exitCode"`
	InitMs   float64  `json:"initMs"`
	TotalMs  float64  `json:"totalMs"`
	Stops    []string `json:"stopReasons"`
	Updates  struct{ Stream, Cancel int }
	Messages struct{ Sent, Received int }
}

// outcome is one recorded conversation.
type outcome struct {
	sum        summary
	transcript []byte
	stderr     []byte
	stdout     []byte
}

// converse runs client.mjs against the agent behind wrap and returns what
// it recorded; any failed client check fails the test.
func converse(t *testing.T, wrap []string, exitCode int) outcome {
	t.Helper()
	dir, out := acpDir(t), t.TempDir()
	tr, se := filepath.Join(out, "transcript"), filepath.Join(out, "stderr")
	args := []string{filepath.Join(dir, "client.mjs"), "--transcript", tr, "--stderr", se,
		"--expect-exit", strconv.Itoa(exitCode), "--timeout-ms", strconv.Itoa(int(clientTimeout / time.Millisecond)), "--"}
	args = append(args, wrap...)
	args = append(args, "node", filepath.Join(dir, "agent.mjs"), "--exit-code", strconv.Itoa(exitCode))
	ctx, cancel := context.WithTimeout(context.Background(), runBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	cmd.Env = agentEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var o outcome
	o.stdout = stdout.Bytes()
	if jerr := json.Unmarshal(bytes.TrimSpace(o.stdout), &o.sum); jerr != nil {
		t.Fatalf("client: %v (%v); stdout %q stderr %q", err, jerr, o.stdout, stderr.String())
	}
	if err != nil || !o.sum.OK {
		t.Fatalf("client: %v; failed checks %q; stderr %q", err, o.sum.Failures, stderr.String())
	}
	o.transcript = readFile(t, tr)
	o.stderr = readFile(t, se)
	for name, b := range map[string][]byte{"transcript": o.transcript, "agent stderr": o.stderr,
		"client stdout": o.stdout, "client stderr": stderr.Bytes()} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the secret from the agent's env reached the %s", name)
		}
	}
	return o
}

// agentEnv is the environment of the client and so of a directly spawned
// agent: exactly what loki-supervise session passes by default (docs/
// session.md), plus the token. Both agents then start alike; with the full
// environment a NODE_EXTRA_CA_CERTS or NODE_OPTIONS would slow or change
// only the direct one.
func agentEnv() []string {
	env := []string{"ACP_TEST_TOKEN=" + secret}
	for _, name := range []string{"HOME", "LANG", "LC_ALL", "LC_CTYPE", "LOGNAME", "PATH", "TERM", "TZ", "USER"} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameBytes fails with the first differing line when got is not want.
func sameBytes(t *testing.T, what string, want, got []byte) {
	t.Helper()
	if bytes.Equal(want, got) {
		return
	}
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			t.Errorf("%s differs from the direct run (%d vs %d bytes) at line %d:\ndirect: %.300q\nloki:   %.300q",
				what, len(want), len(got), i+1, w, g)
			return
		}
	}
}

// TestTranscriptMatchesDirect is the claim: through loki, on every
// backend, the conversation is the one the client has with the agent
// directly, byte for byte, ending with the agent's own exit code after the
// client closes its stdin. LOKI_ACP_RUNS=N repeats each mode for timing.
func TestTranscriptMatchesDirect(t *testing.T) {
	requireSDK(t)
	runs := 1
	if n, err := strconv.Atoi(os.Getenv("LOKI_ACP_RUNS")); err == nil && n > 0 {
		runs = n
	}
	for _, code := range []int{0, 3} {
		t.Run(fmt.Sprintf("exit-%d", code), func(t *testing.T) {
			direct := converse(t, nil, code)
			checkShape(t, direct.sum)
			timing := map[string][]summary{"direct": {direct.sum}}
			for i := 1; i < runs; i++ {
				timing["direct"] = append(timing["direct"], converse(t, nil, code).sum)
			}
			for _, m := range modes() {
				t.Run(m.name, func(t *testing.T) {
					wrap := m.wrap(t)
					for i := 0; i < runs; i++ {
						o := converse(t, wrap, code)
						sameBytes(t, "transcript", direct.transcript, o.transcript)
						sameBytes(t, "agent stderr", direct.stderr, o.stderr)
						timing[m.name] = append(timing[m.name], o.sum)
					}
				})
			}
			logTiming(t, timing)
		})
	}
}

// checkShape guards against a test that compares two empty transcripts: the
// conversation must have streamed, asked permission and been cancelled.
func checkShape(t *testing.T, s summary) {
	t.Helper()
	if len(s.Stops) != 2 || s.Stops[0] != "end_turn" || s.Stops[1] != "cancelled" {
		t.Errorf("stop reasons %q, want [end_turn cancelled]", s.Stops)
	}
	if s.Updates.Stream < 5 || s.Updates.Cancel != 4 {
		t.Errorf("updates %+v, want >= 5 streamed and 4 around the cancel", s.Updates)
	}
}

// logTiming prints the median time to the initialize response and to the
// agent's exit, per mode.
func logTiming(t *testing.T, timing map[string][]summary) {
	names := make([]string, 0, len(timing))
	for n := range timing {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var init, total []float64
		for _, s := range timing[n] {
			init, total = append(init, s.InitMs), append(total, s.TotalMs)
		}
		t.Logf("%-10s runs=%d  initialize response p50 %6.1f ms  total p50 %6.1f ms",
			n, len(init), median(init), median(total))
	}
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
