package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestKubeCommandsExecTheSibling builds loki-supervise and runs pod-spec
// and attach as a user would: they must run the loki-kube beside the
// binary's real path, with the command line untouched, never a loki-kube
// planted on PATH; without the sibling, one line and 127, but --help
// still answers.
func TestKubeCommandsExecTheSibling(t *testing.T) {
	if testing.Short() {
		t.Skip("builds loki-supervise")
	}
	top := t.TempDir()
	dir, planted, link := filepath.Join(top, "real"), filepath.Join(top, "path"), filepath.Join(top, "link")
	for _, d := range []string{dir, planted, link} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self := filepath.Join(dir, "loki-supervise")
	if out, err := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", self, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.Symlink(self, filepath.Join(link, "loki-supervise")); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(top, "planted-ran")
	writeScript(t, filepath.Join(planted, "loki-kube"), "touch "+marker)
	run := func(bin string, args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "PATH="+planted+string(os.PathListSeparator)+os.Getenv("PATH"))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("%s %v: %v", bin, args, err)
		}
		return cmd.ProcessState.ExitCode(), string(out), stderr.String()
	}

	for _, name := range []string{"pod-spec", "attach"} {
		code, _, stderr := run(self, name, "--pod", "x")
		if code != 127 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, filepath.Join(dir, "loki-kube")) {
			t.Errorf("%s without loki-kube: exit %d, stderr %q; want 127 and one line naming %s", name, code, stderr, filepath.Join(dir, "loki-kube"))
		}
		code, out, _ := run(self, name, "--help")
		if code != 0 || !strings.Contains(out, "loki-supervise "+name) || !strings.Contains(out, "--namespace") {
			t.Errorf("%s --help without loki-kube: exit %d, %q", name, code, out)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a loki-kube found on PATH ran")
	}

	writeScript(t, filepath.Join(dir, "loki-kube"), `printf '%s\n' "$@"`)
	args := []string{"pod-spec", "--image", "a b", "--help", "--", "--yaml"}
	code, out, stderr := run(filepath.Join(link, "loki-supervise"), args...)
	if code != 0 || out != strings.Join(args, "\n")+"\n" {
		t.Errorf("through a symlink: exit %d, argv %q, stderr %q; want %q", code, out, stderr, args)
	}
}

func writeScript(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}
