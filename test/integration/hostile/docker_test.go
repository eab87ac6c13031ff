//go:build linux

package hostile

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
)

// privateDockerd starts a Docker daemon of this test's own (its own
// data, exec root, pid file and socket under a temp dir, vfs storage, no
// bridge, no iptables) so that it can be stopped without touching the
// shared one, and loads the test image into it. It returns the socket's
// DOCKER_HOST and the daemon's process, which the caller may stop; the
// cleanup kills it and its containerd by PID if still alive.
func privateDockerd(t *testing.T, docker, image string) (string, *exec.Cmd) {
	t.Helper()
	dockerd := testutil.RequireCommand(t, "dockerd")
	dir, err := os.MkdirTemp("", "lkd") // short: a unix socket path is length-limited
	if err != nil {
		t.Fatal(err)
	}
	host := "unix://" + filepath.Join(dir, "d.sock")
	// Its own (empty) config file: the host's daemon.json, if any, must
	// not name what the flags below set.
	config := filepath.Join(dir, "daemon.json")
	if err := os.WriteFile(config, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cmd := exec.Command(dockerd, "--config-file", config, "--data-root", filepath.Join(dir, "root"), "--exec-root", filepath.Join(dir, "exec"),
		"--pidfile", filepath.Join(dir, "d.pid"), "-H", host, "--bridge", "none", "--iptables=false",
		"--ip-masq=false", "--storage-driver", "vfs", "--cgroup-parent", "loki-test-"+filepath.Base(dir))
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := testutil.Wait(cmd)
	t.Cleanup(func() {
		w.Kill()
		if b, err := os.ReadFile(filepath.Join(dir, "exec", "containerd", "containerd.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		// dockerd bind-mounts its data root onto itself (and may leave
		// mounts under its exec root): detach them before removing.
		for _, sub := range []string{"root", "exec"} {
			exec.Command("umount", "-R", "-l", filepath.Join(dir, sub)).Run()
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("private dockerd's dir not removed: %v", err)
		}
	})
	ok := testutil.WaitUntil(wait, func() bool {
		select {
		case <-w.Done():
			return true
		default:
		}
		return exec.Command(docker, "-H", host, "version", "--format", "{{.Server.Version}}").Run() == nil
	})
	select {
	case <-w.Done():
		ok = false
	default:
	}
	if !ok {
		t.Fatalf("private dockerd did not answer: %s", log.String())
	}
	save := exec.Command(docker, "save", image)
	load := exec.Command(docker, "-H", host, "load", "-q")
	pipe, _ := save.StdoutPipe()
	load.Stdin = pipe
	if err := save.Start(); err != nil {
		t.Fatal(err)
	}
	if out, err := load.CombinedOutput(); err != nil {
		t.Fatalf("docker load: %v %s", err, out)
	}
	save.Wait()
	return host, cmd
}

// TestDockerEngineLost: the Docker daemon stops while a session runs. The
// session must end within a bound with a line naming the engine's loss
// and 125 (before: 143 and no line, as if the peer had been terminated).
func TestDockerEngineLost(t *testing.T) {
	docker := testutil.RequireDocker(t)
	image := testutil.DockerImage(t, "loki-test:busybox")
	host, daemon := privateDockerd(t, docker, image)
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t, "loki-supervise"), "session", "--isolation", "docker",
		"--image", image, "--network", "none", "--", "/bin/sh", "-c", "echo ready; exec sleep 120")
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+host)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		ready <- err == nil && line == "ready\n"
		bufio.NewReader(out).WriteTo(&bytes.Buffer{})
	}()
	select {
	case ok := <-ready:
		if !ok {
			cmd.Wait()
			t.Fatalf("session did not start: %s", stderr.String())
		}
	case <-time.After(wait):
		t.Fatalf("session not ready within %v: %s", wait, stderr.String())
	}
	daemon.Process.Signal(syscall.SIGTERM) // the private daemon, by PID
	err := cmd.Wait()
	code := testutil.ExitCode(err)
	// loki-init's own line (the SIGTERM the engine sent it) may come
	// first; the supervisor's last line must name the engine.
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if code != 125 || !strings.Contains(lines[len(lines)-1], "engine-lost: the Docker daemon went away") {
		t.Errorf("exit %d, stderr %q: want 125 and a last line naming the engine's loss", code, stderr.String())
	}
}
