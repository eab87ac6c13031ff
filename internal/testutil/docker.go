package testutil

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// BusyboxImage is the image test/images/busybox.sh builds by default.
const BusyboxImage = "loki-test:busybox"

var dockerOK = sync.OnceValues(func() (string, string) {
	path, err := exec.LookPath("docker")
	if err != nil {
		return "", "the docker CLI is not installed (.ci/run installs docker.io)"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, path, "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		return "", "no Docker daemon answers `docker info` (.ci/run starts one): " + firstLine(out)
	}
	return path, ""
})

// RequireDocker skips (or fails under CI, where .ci/run starts dockerd)
// unless root can reach a running Docker engine; it returns the CLI's path.
func RequireDocker(t testing.TB) string {
	t.Helper()
	RequireRoot(t)
	path, reason := dockerOK()
	if reason != "" {
		skipOrFail(t, reason)
	}
	return path
}

var imageMu sync.Mutex

// DockerImage makes sure the local image tag exists, built by
// test/images/busybox.sh with the given `docker import --change`
// instructions, and returns tag. The image is kept for later runs.
func DockerImage(t testing.TB, tag string, changes ...string) string {
	t.Helper()
	return DockerImageFiles(t, tag, nil, changes...)
}

// DockerImageFiles is DockerImage with files (path inside the image =>
// content) added to the rootfs, such as etc/passwd.
func DockerImageFiles(t testing.TB, tag string, files map[string]string, changes ...string) string {
	t.Helper()
	RequireDocker(t)
	imageMu.Lock()
	defer imageMu.Unlock()
	args := []string{filepath.Join(ModuleRoot(t), "test", "images", "busybox.sh"), tag}
	for _, c := range changes {
		args = append(args, "--change", c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", args...)
	if len(files) > 0 {
		extra := t.TempDir()
		for name, content := range files {
			p := filepath.Join(extra, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd.Env = append(os.Environ(), "EXTRA_ROOT="+extra)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build image %s: %v\n%s", tag, err, out)
	}
	return tag
}

func firstLine(b []byte) string {
	for i, c := range b {
		if c == '\n' {
			return string(b[:i])
		}
	}
	return string(b)
}

var containerdOK = sync.OnceValues(func() (string, string) {
	if _, err := exec.LookPath("ctr"); err != nil {
		return "", "ctr is not installed (.ci/run installs containerd)"
	}
	candidates := []string{"/run/containerd/containerd.sock", "/run/docker/containerd/containerd.sock"}
	if a := os.Getenv("LOKI_CONTAINERD_ADDRESS"); a != "" {
		candidates = []string{a}
	}
	for _, a := range candidates {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := exec.CommandContext(ctx, "ctr", "--address", a, "version").Run()
		cancel()
		if err == nil {
			return a, ""
		}
	}
	return "", fmt.Sprintf("no containerd answers at %v (.ci/run starts dockerd, which runs one; or set LOKI_CONTAINERD_ADDRESS)", candidates)
})

// RequireContainerd skips (or fails under CI) unless root can reach a
// containerd through ctr; it returns the socket address: the system's, or
// the one dockerd runs (tests use a namespace of their own on it).
func RequireContainerd(t testing.TB) string {
	t.Helper()
	RequireRoot(t)
	addr, reason := containerdOK()
	if reason != "" {
		skipOrFail(t, reason)
	}
	return addr
}
