package seatbelt

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loki-sh/loki/internal/execution/sandbox/boundary"
	"github.com/loki-sh/loki/internal/execution/sandbox/seatbelt/seatbelttest"
)

func TestMain(m *testing.M) {
	// The probe tests run this test binary as the payload.
	if len(os.Args) > 1 && os.Args[1] == "seatbelt-payload" {
		os.Exit(RunPayload(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// fixture is a valid configuration laid out in a temp dir.
type fixture struct {
	root, wsRoot, workspace, spec, runSh string
	env                                  map[string]string
}

func newBoundary(t *testing.T, ports string) *fixture {
	t.Helper()
	root := seatbelttest.ShortRoot(t, "sb")
	b := &fixture{
		root:      root,
		wsRoot:    filepath.Join(root, "protected", "ws"),
		workspace: filepath.Join(root, "protected", "ws", "project"),
		runSh:     filepath.Join(root, "engine", "autonomy", "run.sh"),
	}
	b.spec = filepath.Join(b.workspace, "spec.md")
	for _, d := range []string{b.workspace, filepath.Dir(b.runSh), filepath.Join(root, "rt"), filepath.Join(root, "out")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{b.runSh, b.spec} {
		if err := os.WriteFile(f, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b.env = map[string]string{
		boundary.EnvProtectedRoot:     filepath.Join(root, "protected"),
		boundary.EnvWorkspaceRoots:    b.wsRoot,
		boundary.EnvRuntimeReadPaths:  filepath.Join(root, "rt"),
		boundary.EnvRuntimeWritePaths: filepath.Join(root, "out"),
		boundary.EnvChildPath:         "/usr/bin:/bin:/usr/sbin:/sbin",
		boundary.EnvReservedPorts:     ports,
		"HOME":                        root,
	}
	return b
}

func (b *fixture) lookup(k string) (string, bool) { v, ok := b.env[k]; return v, ok }

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
