//go:build linux

package pid1

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/pid1/pid1test"
	"github.com/loki-sh/loki/internal/testutil"
)

// secret is planted in the launch env and argv; it must never reach stderr.
const secret = "s3cr3t-token-7f2b9c"

// generous bounds for a loaded 2-vCPU machine.
const (
	waitShort = 30 * time.Second
	waitLong  = 90 * time.Second
)

func initBinary(t *testing.T) string { return testutil.Binary(t, "loki-init") }

// shell is a peer running script with /bin/sh in cwd "/", with the secret
// in its env.
func shell(script string, args ...string) *launch.Spec {
	argv := append([]string{"/bin/sh", "-c", script, "peer"}, args...)
	return &launch.Spec{Argv: argv, Cwd: "/", Env: map[string]string{
		"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LOKI_SECRET": secret,
	}}
}

// start runs a session with the short flags most tests use.
func start(t *testing.T, cfg pid1test.Config) *pid1test.Session {
	t.Helper()
	cfg.Binary = initBinary(t)
	if cfg.Flags == nil {
		cfg.Flags = []string{"-lease-duration", "3s", "-grace", "2s"}
	}
	return pid1test.Start(t, cfg)
}

// markerDir is a directory the peer and the test both see (the mount
// namespace is a private copy of the host's).
func markerDir(t *testing.T) string {
	d := t.TempDir()
	os.Chmod(d, 0o777)
	return d
}

func waitFile(t *testing.T, path string) string {
	t.Helper()
	var b []byte
	ok := testutil.WaitUntil(waitShort, func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil && strings.HasSuffix(string(b), "\n")
	})
	if !ok {
		t.Fatalf("%s did not appear", filepath.Base(path))
	}
	return strings.TrimSpace(string(b))
}

func requireCode(t *testing.T, r pid1test.Result, want int) {
	t.Helper()
	if r.Code != want {
		t.Fatalf("exit code %d (signal %v), want %d\nstdout: %.400q\nstderr: %.400q", r.Code, r.Signal, want, r.Stdout, r.Stderr)
	}
}

func requireNoSecret(t *testing.T, r pid1test.Result) {
	t.Helper()
	if strings.Contains(string(r.Stderr), secret) || strings.Contains(string(r.Stdout), secret) {
		t.Fatalf("launch data leaked: stderr %q", r.Stderr)
	}
}

// hashWriter digests what it is given.
type hashWriter struct {
	h hash.Hash
	n int64
}

func newHashWriter() *hashWriter { return &hashWriter{h: sha256.New()} }

func (w *hashWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return w.h.Write(p)
}

func (w *hashWriter) sum() string { return hex.EncodeToString(w.h.Sum(nil)) }
