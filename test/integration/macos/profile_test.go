package macos

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/execution/sandbox/seatbelt"
	"github.com/loki-sh/loki/internal/execution/sandbox/seatbelt/seatbelttest"
	"github.com/loki-sh/loki/internal/testutil"
)

const id = "5eab0e17-2222-4333-8444-555555555555"

// printProfile runs `build ... --print-profile` with exactly env (plus
// PATH) and returns stdout, stderr and the exit code.
func printProfile(t *testing.T, env map[string]string, c seatbelttest.Case, root, data string) (string, string, int) {
	t.Helper()
	lokiDir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t, "loki-supervise"), "build", "--execution-id", id,
		"--run-sh", seatbelttest.Expand(c.RunSh, root), "--workspace", seatbelttest.Expand(c.Workspace, root),
		"--loki-dir", lokiDir, "--spec", seatbelttest.Expand(c.Spec, root), "--provider", "claude", "--print-profile")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LOKI_DATA_DIR=" + data}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

// TestPrintProfileMatchesReference: the profile the binary prints for each
// golden case is the reference's, whether Seatbelt is armed or not, and
// printing it runs nothing and leaves no record.
func TestPrintProfileMatchesReference(t *testing.T) {
	testdata := filepath.Join(testutil.ModuleRoot(t), "internal", "execution", "sandbox", "seatbelt", "testdata")
	seatbelttest.RequireMachine(t, testdata, seatbelt.Devices())
	for _, c := range seatbelttest.Load(t, testdata) {
		for _, armed := range []bool{false, true} {
			name := c.Name + "/unarmed"
			if armed {
				name = c.Name + "/armed"
			}
			t.Run(name, func(t *testing.T) {
				root := c.Build(t)
				// A run.sh that ran would leave this file behind.
				ran := filepath.Join(root, "ran")
				os.WriteFile(seatbelttest.Expand(c.RunSh, root), []byte("#!/bin/sh\ntouch "+ran+"\n"), 0o700)
				env := c.Environ(root)
				if armed {
					env[seatbelt.EnvSeatbelt] = "1"
					env[seatbelt.EnvProbeSHA256] = strings.Repeat("a", 64)
				}
				data := filepath.Join(t.TempDir(), "data")
				out, errOut, code := printProfile(t, env, c, root, data)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				if want := seatbelttest.Want(t, testdata, c.Name+".sb"); out != string(want) {
					t.Errorf("%s: printed profile differs from the reference\n--- got\n%s\n--- want\n%s", c.About, out, want)
				}
				if runtime.GOOS != "darwin" && !strings.Contains(errOut, "macOS only") {
					t.Errorf("stderr %q does not say the profile is not in force here", errOut)
				}
				if strings.Count(errOut, "\n") > 1 {
					t.Errorf("stderr is more than one note: %q", errOut)
				}
				if _, err := os.Stat(ran); err == nil {
					t.Error("--print-profile ran the build")
				}
				if _, err := os.Stat(data); err == nil {
					t.Error("--print-profile created the data directory")
				}
			})
		}
	}
}

// TestPrintProfileNamesTheWrongVariable: an invalid boundary is the
// user's to fix (exit 2), and the message says which variable and why.
func TestPrintProfileNamesTheWrongVariable(t *testing.T) {
	testdata := filepath.Join(testutil.ModuleRoot(t), "internal", "execution", "sandbox", "seatbelt", "testdata")
	c := seatbelttest.Load(t, testdata)[0]
	for _, tc := range []struct{ name, key, value, want string }{
		{"port out of range", "LOKI_HOST_RESERVED_PORTS", "70000", "LOKI_HOST_RESERVED_PORTS"},
		{"relative runtime path", "LOKI_HOST_RUNTIME_WRITE_PATHS", "scratch", "LOKI_HOST_RUNTIME_WRITE_PATHS"},
		{"child path without the system dirs", "LOKI_HOST_CHILD_PATH", "/opt/bin", "LOKI_HOST_CHILD_PATH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := c.Build(t)
			env := c.Environ(root)
			env[tc.key] = tc.value
			out, errOut, code := printProfile(t, env, c, root, filepath.Join(t.TempDir(), "data"))
			if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and a message naming %s", code, out, errOut, tc.want)
			}
		})
	}
}
