//go:build linux

package faults

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/pid1/pid1test"
	"github.com/loki-sh/loki/internal/testutil"
	"github.com/loki-sh/loki/internal/testutil/backends"
)

// secret stands for an API key in a launch env: it must never be echoed.
const secret = "sk-ant-FAULTS-SECRET-0451"

func frame(body string) []byte {
	b := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(b, uint32(len(body)))
	return append(b, body...)
}

// runInit runs loki-init as PID 1 with a raw prelude and no stdin.
func runInit(t *testing.T, prelude []byte) pid1test.Result {
	t.Helper()
	s := pid1test.Start(t, pid1test.Config{Binary: testutil.Binary(t, "loki-init"), Prelude: prelude})
	return s.Wait(wait)
}

func requireRefusal(t *testing.T, r pid1test.Result, stage, class string) {
	t.Helper()
	want := "ACP supervisor refused at " + stage + ": " + class + "\n"
	if r.Code != 125 || string(r.Stderr) != want {
		t.Fatalf("exit %d stderr %q, want 125 and %q", r.Code, r.Stderr, want)
	}
	if bytes.Contains(r.Stderr, []byte(secret)) || bytes.Contains(r.Stdout, []byte(secret)) {
		t.Fatalf("launch data echoed: %q", r.Stderr)
	}
}

// TestHostilePreludeRefused: NUL bytes smuggled in as JSON escapes, an
// argument over the kernel's per-string limit and lone UTF-16 surrogates
// are each refused with one fixed line and no launch data.
func TestHostilePreludeRefused(t *testing.T) {
	env := `"env":{"API_KEY":"` + secret + `","PATH":"/usr/bin:/bin"}`
	huge := strings.Repeat("x", 200<<10) // > MAX_ARG_STRLEN (128 KiB): execve says E2BIG
	cases := []struct {
		name, body, stage, class string
	}{
		{"nul-in-argv", `{"argv":["/bin/echo","a\u0000` + secret + `"],"cwd":"/",` + env + `}`, "peer-spawn", "launch-nul-byte"},
		{"nul-in-argv0", `{"argv":["/bin/echo\u0000"],"cwd":"/",` + env + `}`, "peer-spawn", "launch-nul-byte"},
		{"nul-in-env-value", `{"argv":["/bin/true"],"cwd":"/","env":{"API_KEY":"` + secret + `\u0000x"}}`, "peer-spawn", "launch-nul-byte"},
		{"nul-in-env-name", `{"argv":["/bin/true"],"cwd":"/","env":{"A\u0000B":"` + secret + `"}}`, "peer-spawn", "launch-env-name"},
		{"nul-in-cwd", `{"argv":["/bin/true"],"cwd":"/\u0000tmp",` + env + `}`, "peer-spawn", "launch-nul-byte"},
		{"argument-over-kernel-limit", `{"argv":["/bin/true","` + huge + `"],"cwd":"/",` + env + `}`, "peer-spawn", "spawn-failed"},
		{"raw-invalid-utf8-argv", "{\"argv\":[\"/bin/echo\",\"\xc3\x28\"],\"cwd\":\"/\"," + env + "}", "launch-input", "launch-syntax"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireRefusal(t, runInit(t, frame(tc.body)), tc.stage, tc.class)
		})
	}
}

// TestHugeLaunchPassesExactly: 20,000 arguments and 100,000 environment
// entries in one prelude under the 1 MiB cap reach the peer exactly (the
// peer prints its argv and its environ; the test compares byte for byte).
func TestHugeLaunchPassesExactly(t *testing.T) {
	t.Run("argv", func(t *testing.T) {
		args := make([]string, 20000)
		for i := range args {
			args[i] = fmt.Sprintf("arg-%d-é", i)
		}
		spec := launch.Spec{Argv: append([]string{"/bin/sh", "-c", `printf '%s\0' "$@"`, "sh"}, args...), Cwd: "/",
			Env: map[string]string{"API_KEY": secret}}
		r := runInit(t, encode(t, spec))
		if want := strings.Join(args, "\x00") + "\x00"; r.Code != 0 || string(r.Stdout) != want {
			t.Fatalf("exit %d stderr %q; stdout %d bytes, want %d", r.Code, r.Stderr, len(r.Stdout), len(want))
		}
	})
	t.Run("env", func(t *testing.T) {
		env := map[string]string{"API_KEY": secret}
		for i := 0; len(env) < 100000; i++ {
			env[envName(i)] = ""
		}
		spec := launch.Spec{Argv: []string{"/bin/cat", "/proc/self/environ"}, Cwd: "/", Env: env}
		wire := encode(t, spec)
		t.Logf("prelude with %d env entries: %d bytes (cap %d)", len(env), len(wire)-4, launch.MaxSize)
		r := runInit(t, wire)
		want := strings.Join(spec.Environ(), "\x00") + "\x00"
		if r.Code != 0 || string(r.Stdout) != want {
			t.Fatalf("exit %d stderr %q; environ %d bytes, want %d", r.Code, r.Stderr, len(r.Stdout), len(want))
		}
		if bytes.Contains(r.Stderr, []byte(secret)) {
			t.Fatal("secret on stderr")
		}
	})
}

// envName is the i-th name of the form [A-Za-z]{1,4}: short names keep
// 10^5 entries under the 1 MiB prelude cap.
func envName(i int) string {
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	var b []byte
	for i++; i > 0; i /= len(letters) {
		i--
		b = append(b, letters[i%len(letters)])
	}
	return string(b)
}

func encode(t *testing.T, s launch.Spec) []byte {
	t.Helper()
	b, err := launch.Encode(s)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return b
}

// sessionRun runs `loki-supervise session` (namespace backend) with env.
func sessionRun(t *testing.T, env []string, args ...string) outcome {
	t.Helper()
	full := append(append([]string{"session"}, backends.Get("namespace").Flags(t, backends.Busybox)...),
		"--init", testutil.Binary(t, "loki-init"), "--control-root", t.TempDir())
	full = append(full, args...)
	return cli(t, env, full...)
}

// TestHostileSessionInput: the same hostile input through the supervisor.
// A prelude over the cap is refused before anything starts (usage, 2);
// 10,000 --env values and 5,000 arguments pass exactly; a copied secret
// never reaches stderr.
func TestHostileSessionInput(t *testing.T) {
	env := []string{"PATH=/usr/bin:/bin", "API_KEY=" + secret}
	t.Run("over-the-cap", func(t *testing.T) {
		big := strings.Repeat("y", 120<<10)
		args := []string{"--env", "API_KEY", "--", "/bin/true"}
		for range 10 {
			args = append(args, big)
		}
		o := sessionRun(t, env, args...)
		if o.code != 2 {
			t.Fatalf("exit %d, want 2; stderr %q", o.code, o.stderr)
		}
		requireNoCrash(t, o.stderr, secret)
		requireOneLine(t, o.stderr, "launch-size")
		if strings.Contains(o.stderr, "yyyy") {
			t.Fatal("stderr echoes the launch data")
		}
	})
	t.Run("many-env-and-args", func(t *testing.T) {
		args := []string{"--no-default-env", "--env", "API_KEY"}
		var want []string
		for i := range 10000 {
			kv := fmt.Sprintf("%s=v%d,x", envName(i), i)
			args = append(args, "--env", kv)
			want = append(want, kv)
		}
		args = append(args, "--", "/bin/sh", "-c", `printf '%s\0' "$@"; cat /proc/self/environ >&2`, "sh")
		var argv []string
		for i := range 5000 {
			argv = append(argv, fmt.Sprintf("a%d\t\n'\"$x", i))
		}
		o := sessionRun(t, env, append(args, argv...)...)
		if o.code != 0 {
			t.Fatalf("exit %d, stderr %.300q", o.code, o.stderr)
		}
		if o.stdout != strings.Join(argv, "\x00")+"\x00" {
			t.Fatalf("argv not passed exactly: %d bytes", len(o.stdout))
		}
		got := map[string]bool{}
		for _, kv := range strings.Split(strings.TrimSuffix(o.stderr, "\x00"), "\x00") {
			got[kv] = true
		}
		for _, kv := range append(want, "API_KEY="+secret) {
			if !got[kv] {
				t.Fatalf("env entry %q missing (%d entries arrived)", kv, len(got))
			}
		}
	})
}

// TestSurrogateEscapedBytesPassExactly: JSON cannot hold the byte 0xff, so
// a host (the Python reference's json.dumps, or launch.Encode) sends it as
// the lone surrogate escape \udcff. The peer must receive the byte itself,
// not U+FFFD; a lone surrogate that stands for no byte is refused.
func TestSurrogateEscapedBytesPassExactly(t *testing.T) {
	r := runInit(t, frame(`{"argv":["/usr/bin/printf","%s","a\udcffb"],"cwd":"/","env":{"API_KEY":"`+secret+`"}}`))
	if r.Code != 0 || string(r.Stdout) != "a\xffb" {
		t.Fatalf("exit %d, peer printed %q, want a\\xffb; stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = runInit(t, frame(`{"argv":["/usr/bin/printf","%s","a\ud800b"],"cwd":"/","env":{"API_KEY":"`+secret+`"}}`))
	requireRefusal(t, r, "launch-input", "launch-syntax")
}

// TestSessionNonUTF8PassesExactly: an argv or env value that is not UTF-8
// reaches the peer byte for byte through loki-supervise session.
func TestSessionNonUTF8PassesExactly(t *testing.T) {
	env := []string{"PATH=/usr/bin:/bin", "API_KEY=" + secret}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"argv", []string{"--env", "API_KEY", "--", "/usr/bin/printf", "%s", "a\xffb"}},
		{"env", []string{"--env", "API_KEY", "--env", "X=a\xffb", "--", "/bin/sh", "-c", `printf %s "$X"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := sessionRun(t, env, tc.args...)
			requireNoCrash(t, o.stderr, secret)
			if o.code != 0 || o.stdout != "a\xffb" {
				t.Fatalf("exit %d, peer printed %q, want a\\xffb; stderr %q", o.code, o.stdout, o.stderr)
			}
		})
	}
}
