package boundarytest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Layout is a valid boundary under Root:
//
//	Root/protected                   LOKI_HOST_PROTECTED_ROOT
//	Root/protected/ws                LOKI_WORKSPACE_ROOTS
//	Root/protected/ws/project        the workspace, with spec.md
//	Root/engine/autonomy/run.sh      the engine (an executable stub)
//	Root/rt                          LOKI_HOST_RUNTIME_READ_PATHS
//	Root/out                         LOKI_HOST_RUNTIME_WRITE_PATHS
//	Root/secret                      named by no variable, holds "key"
//	Root/data                        named by no variable (records, logs)
//
// with the system PATH as LOKI_HOST_CHILD_PATH, port 8080 reserved and
// HOME at Root. An enforcer must refuse Secret; Data is where a test puts
// what the supervisor writes. Tests change Env to break or extend it.
type Layout struct {
	Root, Protected, WSRoot, Workspace, Spec, Engine, RunSh, RT, Out string
	Secret, Data                                                     string

	Env map[string]string
}

// ChildPath is the LOKI_HOST_CHILD_PATH of a new Layout.
const ChildPath = "/usr/bin:/bin:/usr/sbin:/sbin"

// New lays the boundary out under root, or under a fresh temp dir with
// its symlinks resolved (the boundary resolves them too) when root is "".
func New(t testing.TB, root string) *Layout {
	t.Helper()
	if root == "" {
		var err error
		if root, err = filepath.EvalSymlinks(t.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
	l := &Layout{
		Root:      root,
		Protected: filepath.Join(root, "protected"),
		WSRoot:    filepath.Join(root, "protected", "ws"),
		Workspace: filepath.Join(root, "protected", "ws", "project"),
		Engine:    filepath.Join(root, "engine"),
		RunSh:     filepath.Join(root, "engine", "autonomy", "run.sh"),
		RT:        filepath.Join(root, "rt"),
		Out:       filepath.Join(root, "out"),
		Secret:    filepath.Join(root, "secret"),
		Data:      filepath.Join(root, "data"),
	}
	l.Spec = filepath.Join(l.Workspace, "spec.md")
	for _, d := range []string{l.Workspace, filepath.Dir(l.RunSh), l.RT, l.Out, l.Secret, l.Data} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	WriteFile(t, l.RunSh, "#!/bin/sh\n", 0o700)
	WriteFile(t, l.Spec, "spec\n", 0o600)
	WriteFile(t, filepath.Join(l.Secret, "key"), "s3cret\n", 0o600)
	l.Env = map[string]string{
		"LOKI_HOST_PROTECTED_ROOT":      l.Protected,
		"LOKI_WORKSPACE_ROOTS":          l.WSRoot,
		"LOKI_HOST_RUNTIME_READ_PATHS":  l.RT,
		"LOKI_HOST_RUNTIME_WRITE_PATHS": l.Out,
		"LOKI_HOST_CHILD_PATH":          ChildPath,
		"LOKI_HOST_RESERVED_PORTS":      "8080",
		"HOME":                          root,
	}
	return l
}

// Lookup reads Env, as the boundary reads the environment.
func (l *Layout) Lookup(k string) (string, bool) { v, ok := l.Env[k]; return v, ok }

// Environ is Env as KEY=VALUE lines, sorted, for a child's environment.
func (l *Layout) Environ() []string {
	out := make([]string, 0, len(l.Env))
	for k, v := range l.Env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// WriteFile writes content to path with mode, replacing any file there
// (and its mode: os.WriteFile keeps an existing file's).
func WriteFile(t testing.TB, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
