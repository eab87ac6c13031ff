package provider

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/execution/sandbox/boundary"
	"github.com/loki-sh/loki/internal/execution/sandbox/boundary/boundarytest"
	"github.com/loki-sh/loki/internal/execution/sandbox/seatbelt/seatbelttest"
)

// fixture is the shared valid boundary (boundarytest) with a fake
// provider CLI on the child PATH and a pass-through stand-in for
// sandbox-exec.
type fixture struct {
	*boundarytest.Layout
	bin, rec string
	prober   Prober
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := seatbelttest.ShortRoot(t, "pv")
	f := &fixture{
		Layout: boundarytest.New(t, root),
		bin:    filepath.Join(root, "tools", "bin"),
		rec:    filepath.Join(root, "rec"),
	}
	for _, d := range []string{f.bin, f.rec} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	f.Env[boundary.EnvRuntimeReadPaths] = filepath.Join(root, "tools")
	f.Env[boundary.EnvChildPath] = f.bin + ":" + boundarytest.ChildPath
	f.Env["LOKI_HOST_SEATBELT"] = "1"
	f.Env["ANTHROPIC_API_KEY"] = "sk-must-not-reach-the-cli"
	// The stand-in checks it was given a profile that exists, records
	// that, and runs the command unconfined.
	sandbox := filepath.Join(root, "sandbox-exec")
	write(t, sandbox, `#!/bin/sh
[ "$1" = -f ] && [ -s "$2" ] || exit 64
echo "$2" >> `+filepath.Join(root, "profiles.log")+`
shift 2
exec "$@"
`, 0o755)
	f.prober = Prober{
		Lookup:           f.Lookup,
		GOOS:             "darwin",
		SandboxExec:      sandbox,
		AuthTimeout:      30 * time.Second,
		ReadinessTimeout: 30 * time.Second,
	}
	return f
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// fakeCLI installs a provider CLI that records each invocation (argv, cwd,
// environment) and then runs auth or ready, by its first argument.
func (f *fixture) fakeCLI(t *testing.T, name, auth, ready string) {
	t.Helper()
	write(t, filepath.Join(f.bin, name), `#!/bin/sh
d=`+f.rec+`/run.$(ls `+f.rec+` | wc -l)
mkdir "$d" || exit 90
printf '%s\n' "$@" > "$d/argv"
pwd > "$d/cwd"
env > "$d/env"
echo "SECRET-PROVIDER-OUTPUT" >&2
if [ "$1" = auth ] || [ "$1" = login ]; then
:
`+auth+`
else
:
`+ready+`
fi
`, 0o755)
}

const (
	loggedIn = `echo '{"loggedIn":true,"authMethod":"claude.ai","email":"SECRET-PROVIDER-OUTPUT"}'`
	readyOK  = `echo '{"type":"result","is_error":false,"result":"OK."}'`
)

func TestStatusClassification(t *testing.T) {
	for _, tc := range []struct {
		name      string
		provider  string
		auth      string
		ready     string
		tweak     func(f *fixture)
		want      string
		available bool
		live      bool
		cliRuns   int
	}{
		{name: "seatbelt off", provider: "claude", auth: loggedIn, ready: readyOK,
			tweak: func(f *fixture) { f.Env["LOKI_HOST_SEATBELT"] = "0" }, want: SeatbeltNotEnabled, available: true},
		{name: "unsupported provider", provider: "aider", want: AuthProbeUnsupported},
		{name: "no readiness probe", provider: "codex", auth: "exit 0", want: ReadinessProbeUnsupported},
		{name: "not macOS", provider: "claude", auth: loggedIn, ready: readyOK,
			tweak: func(f *fixture) { f.prober.GOOS = "linux" }, want: AuthConfinementUnavailable},
		{name: "no sandbox-exec", provider: "claude", auth: loggedIn, ready: readyOK,
			tweak: func(f *fixture) { f.prober.SandboxExec = filepath.Join(f.Root, "none") }, want: AuthConfinementUnavailable},
		{name: "sandbox-exec cannot start", provider: "claude", auth: loggedIn, ready: readyOK,
			tweak: func(f *fixture) { os.Chmod(f.prober.SandboxExec, 0o600) }, want: CLIUnavailable},
		{name: "logged in and live", provider: "claude", auth: loggedIn, ready: readyOK,
			want: Available, available: true, live: true, cliRuns: 2},
		{name: "answer with blanks and dots", provider: "claude", auth: loggedIn,
			ready: `printf '%s' '{"is_error":false,"result":"  OK...\n"}'`, want: Available, available: true, live: true, cliRuns: 2},
		{name: "logged out", provider: "claude", auth: `echo '{"loggedIn":false}'`, want: AuthUnavailableInConfinement, cliRuns: 1},
		{name: "logged in but failing", provider: "claude", auth: loggedIn + "; exit 1", want: AuthUnavailableInConfinement, cliRuns: 1},
		{name: "loggedIn not a boolean", provider: "claude", auth: `echo '{"loggedIn":"true"}'`, want: AuthUnavailableInConfinement, cliRuns: 1},
		{name: "auth not JSON", provider: "claude", auth: `echo 'Logged in as SECRET-PROVIDER-OUTPUT'`, want: AuthStatusInvalid, cliRuns: 1},
		{name: "auth JSON not an object", provider: "claude", auth: `echo '[true]'`, want: AuthStatusInvalid, cliRuns: 1},
		{name: "auth output flood", provider: "claude",
			auth: `printf '{"loggedIn":true,"pad":"'; head -c 1100000 /dev/zero | tr '\0' a; printf '"}'`, want: AuthStatusInvalid, cliRuns: 1},
		{name: "cli missing", provider: "claude", tweak: func(f *fixture) { os.Remove(filepath.Join(f.bin, "claude")) },
			want: AuthStatusInvalid},
		{name: "auth hangs", provider: "claude", auth: "exec sleep 600",
			tweak: func(f *fixture) { f.prober.AuthTimeout = time.Second }, want: AuthProbeTimeout, cliRuns: 1},
		{name: "readiness hangs", provider: "claude", auth: loggedIn, ready: "exec sleep 600",
			tweak: func(f *fixture) { f.prober.ReadinessTimeout = time.Second }, want: ReadinessProbeTimeout, cliRuns: 2},
		{name: "readiness error", provider: "claude", auth: loggedIn, ready: `echo '{"is_error":true,"result":"OK"}'`,
			want: LiveInferenceUnavailable, cliRuns: 2},
		{name: "readiness wrong answer", provider: "claude", auth: loggedIn, ready: `echo '{"is_error":false,"result":"OK!"}'`,
			want: LiveInferenceUnavailable, cliRuns: 2},
		{name: "readiness lower case", provider: "claude", auth: loggedIn, ready: `echo '{"is_error":false,"result":"ok"}'`,
			want: LiveInferenceUnavailable, cliRuns: 2},
		{name: "readiness missing is_error", provider: "claude", auth: loggedIn, ready: `echo '{"result":"OK"}'`,
			want: LiveInferenceUnavailable, cliRuns: 2},
		{name: "readiness exit 2", provider: "claude", auth: loggedIn, ready: readyOK + "; exit 2",
			want: LiveInferenceUnavailable, cliRuns: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.fakeCLI(t, tc.provider, tc.auth, tc.ready)
			if tc.tweak != nil {
				tc.tweak(f)
			}
			res, err := f.prober.Smoke(context.Background(), f.WSRoot, f.RunSh, tc.provider)
			if err != nil {
				t.Fatal(err)
			}
			want := Result{Provider: tc.provider, Available: tc.available, Classification: tc.want,
				Action: Action(tc.provider), LiveInference: tc.live}
			if res != want {
				t.Fatalf("result %+v, want %+v", res, want)
			}
			f.checkRuns(t, tc.provider, tc.cliRuns)
			encoded, _ := json.Marshal(res.Map())
			if strings.Contains(string(encoded), "SECRET") {
				t.Fatalf("provider output leaked into the result: %s", encoded)
			}
			if left, _ := filepath.Glob(filepath.Join(f.WSRoot, ".provider-auth-probe-*")); len(left) != 0 {
				t.Fatalf("probe workspace left behind: %v", left)
			}
		})
	}
}

// checkRuns verifies the CLI ran n times with the reference's commands, in
// the probe workspace, with the child environment (no supervisor secrets),
// each under a profile file that is gone afterwards.
func (f *fixture) checkRuns(t *testing.T, provider string, n int) {
	t.Helper()
	want := [][]string{authCommands[provider], readinessCommands[provider]}
	runs, _ := filepath.Glob(filepath.Join(f.rec, "run.*"))
	if len(runs) != n {
		t.Fatalf("CLI ran %d times, want %d", len(runs), n)
	}
	for i := 0; i < n; i++ {
		d := filepath.Join(f.rec, "run."+strconv.Itoa(i))
		raw, err := os.ReadFile(filepath.Join(d, "argv"))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
		if strings.Join(got, "\x00") != strings.Join(want[i][1:], "\x00") {
			t.Errorf("run %d argv %q, want %q", i, got, want[i][1:])
		}
		cwd, _ := os.ReadFile(filepath.Join(d, "cwd"))
		if !strings.HasPrefix(string(cwd), filepath.Join(f.WSRoot, ".provider-auth-probe-")) {
			t.Errorf("run %d cwd %q is not the probe workspace", i, cwd)
		}
		env, _ := os.ReadFile(filepath.Join(d, "env"))
		if strings.Contains(string(env), "sk-must-not") || !strings.Contains(string(env), "LOKI_SUPERVISED_BUILD=1") ||
			!strings.Contains(string(env), "PATH="+f.Env[boundary.EnvChildPath]+"\n") {
			t.Errorf("run %d did not get the child environment", i)
		}
	}
	profiles, _ := os.ReadFile(filepath.Join(f.Root, "profiles.log"))
	if got := len(strings.Fields(string(profiles))); got < n {
		t.Errorf("%d runs under a profile, want at least %d", got, n)
	}
	for _, p := range strings.Fields(string(profiles)) {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("profile %s was not removed", p)
		}
	}
}

// TestTimeoutKillsProcessGroup: a CLI that leaves a helper behind is
// stopped with its helper when the probe times out.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	f := newFixture(t)
	pidFile := filepath.Join(f.Root, "helper.pid")
	f.fakeCLI(t, "claude", "sleep 600 & echo $! > "+pidFile+"; wait", "")
	f.prober.AuthTimeout = time.Second
	res, err := f.prober.Smoke(context.Background(), f.WSRoot, f.RunSh, "claude")
	if err != nil || res.Classification != AuthProbeTimeout {
		t.Fatalf("Smoke = %+v, %v; want %s", res, err, AuthProbeTimeout)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(raw))
	deadline := time.Now().Add(30 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return // gone, or dead and waiting for its new parent to reap it
		}
		if time.Now().After(deadline) {
			t.Fatalf("helper %s survived the probe timeout: %s", pid, stat)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestStatusErrors(t *testing.T) {
	f := newFixture(t)
	f.fakeCLI(t, "claude", loggedIn, readyOK)
	if _, err := f.prober.Smoke(context.Background(), filepath.Join(f.Root, "nope"), f.RunSh, "claude"); !errors.Is(err, boundary.ErrInvalid) {
		t.Errorf("missing workspace root: %v; want ErrInvalid", err)
	}
	f.Env[boundary.EnvReservedPorts] = "70000"
	if _, err := f.prober.Smoke(context.Background(), f.WSRoot, f.RunSh, "claude"); !errors.Is(err, boundary.ErrInvalid) {
		t.Errorf("invalid boundary: %v; want ErrInvalid", err)
	}
}
