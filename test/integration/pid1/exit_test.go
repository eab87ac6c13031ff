//go:build linux

package pid1

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/pid1/pid1test"
)

// The peer's code is the init's code, for the whole byte range, and the
// two output streams stay apart.
func TestPeerExitCodePropagates(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"0", "1", "255"} {
		t.Run("exit-"+code, func(t *testing.T) {
			t.Parallel()
			s := start(t, pid1test.Config{Spec: shell("echo to-out; echo to-err >&2; exit " + code)})
			r := s.Wait(waitShort)
			want := map[string]int{"0": 0, "1": 1, "255": 255}[code]
			requireCode(t, r, want)
			if string(r.Stdout) != "to-out\n" || string(r.Stderr) != "to-err\n" {
				t.Fatalf("streams mixed: stdout %q stderr %q", r.Stdout, r.Stderr)
			}
		})
	}
}

// Outside a PID namespace the init refuses before it touches anything.
func TestRefusesUnlessPID1(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(initBinary(t), dir)
	cmd.Stdin = strings.NewReader("\x00\x00\x00\x02{}")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 125 {
		t.Fatalf("want exit 125, got %v", err)
	}
	if got := stderr.String(); got != "ACP supervisor refused at initialization: not-pid-1\n" {
		t.Fatalf("stderr %q", got)
	}
}

// -h teaches and exits 0; a usage error is a refusal (125).
func TestHelpAndUsage(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(initBinary(t), "-h").CombinedOutput()
	if err != nil {
		t.Fatalf("-h: %v", err)
	}
	for _, want := range []string{"PID 1", "124", "125", "128+N", "-lease-duration", "-grace", "prelude"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("help does not mention %q", want)
		}
	}
	cmd := exec.Command(initBinary(t))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 125 {
		t.Fatalf("no CONTROL_DIR: want 125, got %v", err)
	}
	if !strings.Contains(stderr.String(), "ACP supervisor refused at initialization: usage") {
		t.Fatalf("stderr %q", stderr.String())
	}
	_ = os.Stderr
}
