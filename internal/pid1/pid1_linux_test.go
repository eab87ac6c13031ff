package pid1

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/reap"
)

// A refusal line names the stage and a fixed class, whatever context the
// error was wrapped with (context can hold launch data).
func TestRefusalLineNeverCarriesContext(t *testing.T) {
	cases := []struct {
		stage Stage
		err   error
		want  string
	}{
		{StageInitialization, ErrNotPID1, "ACP supervisor refused at initialization: not-pid-1"},
		{StagePeerSpawn, fmt.Errorf("%w: /secret/path: no such file", launch.ErrNotExecutable), "ACP supervisor refused at peer-spawn: launch-not-executable"},
		{StageLaunchInput, launch.ErrSize, "ACP supervisor refused at launch-input: launch-size"},
		{StagePeerSpawn, fmt.Errorf("TOKEN=abc"), "ACP supervisor refused at peer-spawn: internal"},
	}
	for _, tc := range cases {
		r := &Refusal{Stage: tc.stage, Err: tc.err}
		if r.Error() != tc.want {
			t.Errorf("%q, want %q", r.Error(), tc.want)
		}
	}
}

func TestPeerOutcome(t *testing.T) {
	cases := []struct {
		name      string
		st        reap.Status
		forwarded unix.Signal
		code      int
		line      string
	}{
		{"zero", reap.Status{Exited: true}, 0, 0, ""},
		{"one", reap.Status{Exited: true, Code: 1}, 0, 1, ""},
		{"max", reap.Status{Exited: true, Code: 255}, 0, 255, ""},
		{"exit after a forwarded signal", reap.Status{Exited: true, Code: 5}, unix.SIGTERM, 5, ""},
		{"signal", reap.Status{Signal: 9}, 0, 125, "ACP supervisor refused at supervision: peer-signaled by signal 9 (SIGKILL)"},
		{"forwarded signal", reap.Status{Signal: 15}, unix.SIGTERM, 125,
			"ACP supervisor stopped the peer: SIGTERM was forwarded to it and it was ended by SIGTERM"},
	}
	for _, tc := range cases {
		out := peerOutcome(tc.st, tc.forwarded)
		if got := exitcode.Code(out); got != tc.code {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.code)
		}
		line := ""
		if r := exitcode.Report(out); r != nil {
			line = r.Error()
		}
		if line != tc.line {
			t.Errorf("%s: line %q, want %q", tc.name, line, tc.line)
		}
		if tc.code == 125 && !errors.Is(out, ErrPeerSignal) {
			t.Errorf("%s: not of class ErrPeerSignal", tc.name)
		}
	}
	if got := exitcode.Code(shutdownCode(15)); got != 143 {
		t.Errorf("shutdown after SIGTERM: %d", got)
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "tool"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(bin, "plain"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(bin, "adir"), 0o755)
	cases := []struct {
		name, arg0 string
		env        map[string]string
		want       string // "" = refused
	}{
		{"absolute", filepath.Join(bin, "tool"), nil, filepath.Join(bin, "tool")},
		{"relative to cwd", "bin/tool", nil, filepath.Join(bin, "tool")},
		{"launch PATH", "tool", map[string]string{"PATH": "/nonexistent:" + bin}, filepath.Join(bin, "tool")},
		{"relative PATH entry is cwd-relative", "tool", map[string]string{"PATH": "bin"}, filepath.Join(bin, "tool")},
		{"default PATH", "sh", map[string]string{}, "/bin/sh"},
		{"not executable", "plain", map[string]string{"PATH": bin}, ""},
		{"directory", "adir", map[string]string{"PATH": bin}, ""},
		{"missing", "nope", map[string]string{"PATH": bin}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := lookPath(tc.arg0, dir, tc.env)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("resolved to %s", got)
				}
				return
			}
			if err != nil || !strings.HasSuffix(got, strings.TrimPrefix(tc.want, "/usr")) {
				t.Fatalf("got %q %v, want %q", got, err, tc.want)
			}
		})
	}
}
