package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// InCI reports whether the tests run under CI=true, where every privilege a
// test asks for is present and a skip would hide a failure.
func InCI() bool { return os.Getenv("CI") == "true" }

// skipOrFail skips with reason on a developer machine and fails under CI.
func skipOrFail(t testing.TB, reason string) {
	t.Helper()
	if InCI() {
		t.Fatalf("CI=true but %s", reason)
	}
	t.Skip(reason)
}

// RequireRoot skips (or fails under CI) unless the test runs as root.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		skipOrFail(t, "needs root (euid 0)")
	}
}

var pidnsOK = sync.OnceValue(func() bool {
	if runtime.GOOS != "linux" {
		return false
	}
	return exec.Command("unshare", "--pid", "--fork", "--mount-proc", "true").Run() == nil
})

// RequirePIDNamespace skips (or fails under CI) unless a new PID namespace
// with a fresh /proc can be made here.
func RequirePIDNamespace(t testing.TB) {
	t.Helper()
	if !pidnsOK() {
		skipOrFail(t, "needs CAP_SYS_ADMIN to unshare(CLONE_NEWPID) and mount /proc")
	}
}

// RequireCommand skips (or fails under CI, where .ci/run installs it) unless
// name is on PATH, and returns its path.
func RequireCommand(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		skipOrFail(t, name+" is not installed (.ci/run installs it)")
	}
	return p
}

var (
	buildMu    sync.Mutex
	buildCache = map[string]string{}
	buildDir   string
)

// Binary builds ./cmd/<name> once per test process (static, like the
// release build) and returns the path of the executable. An environment
// variable LOKI_BIN_DIR pointing at prebuilt binaries (make build) wins.
func Binary(t testing.TB, name string) string {
	t.Helper()
	if dir := os.Getenv("LOKI_BIN_DIR"); dir != "" {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := buildCache[name]; ok {
		return p
	}
	if buildDir == "" {
		d, err := os.MkdirTemp("", "loki-test-bin-")
		if err != nil {
			t.Fatalf("temp dir: %v", err)
		}
		buildDir = d
	}
	root := ModuleRoot(t)
	out := filepath.Join(buildDir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./cmd/"+name)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build ./cmd/%s: %v\n%s", name, err, stderr.String())
	}
	buildCache[name] = out
	return out
}

// ModuleRoot returns the directory holding go.mod.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}
