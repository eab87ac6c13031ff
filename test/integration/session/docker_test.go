//go:build linux

package session

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
)

// The docker backend against the real engine (.ci/run starts dockerd).
// Each peer that runs long prints "ready <hostname>": the container's
// hostname is its short id, which names it to docker here.

// dockerReady starts a docker session whose peer prints "ready <id>"
// first, and returns the command, the container id and the line reader.
func dockerReady(t *testing.T, flags []string, script string, env ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	cmd := supervise(t, get("docker"), flags, "sh", "-c", `echo "ready $(hostname)"; `+script)
	cmd.Env = append(cmd.Env, env...)
	stdout, stderr := startHeld(t, cmd)
	line := stdout.next(t, 60*time.Second)
	id, ok := strings.CutPrefix(line, "ready ")
	if !ok || id == "" {
		t.Fatalf("peer said %q", line)
	}
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", id).Run() })
	return cmd, id, stderr
}

// containerExists reports whether docker still has the container (any state).
func containerExists(id string) bool {
	return exec.Command("docker", "container", "inspect", id).Run() == nil
}

// Item 2 of issue 20: loki-init itself killed by the engine is a failed
// session with a line (125), like the namespace backend; a peer's own
// exit 137 stays its code.
func TestDockerInitKilled(t *testing.T) {
	cmd, id, stderr := dockerReady(t, nil, "sleep 1000")
	if out, err := exec.Command("docker", "kill", id).CombinedOutput(); err != nil {
		t.Fatalf("docker kill: %v %s", err, out)
	}
	if code := testutil.WaitExit(t, cmd, generous); code != 125 || !strings.Contains(stderr.String(), "session ended by signal 9") {
		t.Fatalf("exit %d, stderr %q: want 125 and \"session ended by signal 9\"", code, stderr.String())
	}
	r := run(t, supervise(t, get("docker"), nil, "sh", "-c", "exit 137"), "", generous)
	if r.code != 137 || r.stderr != "" {
		t.Fatalf("peer's own exit 137: exit %d, stderr %q", r.code, r.stderr)
	}
}

// Item 3: a container created whose start fails (a file bound onto a
// directory) is "the backend could not start" (127) with a line.
func TestDockerStartFails(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, supervise(t, get("docker"), []string{"--bind", file + ":/bin"}, "true"), "", generous)
	if r.code != 127 || !strings.Contains(r.stderr, "did not start") {
		t.Fatalf("exit %d, stderr %q: want 127 naming that the container did not start", r.code, r.stderr)
	}
}

// Item 4: the docker CLI failing while the session runs (its stdout
// closed early) is lost output (125), not the peer's code, and the
// container is gone afterwards.
func TestDockerOutputLost(t *testing.T) {
	cmd := supervise(t, get("docker"), nil, "sh", "-c", `echo "ready $(hostname)"; exec yes`)
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(stdout)
	line, err := br.ReadString('\n')
	id, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
	if err != nil || !ok {
		t.Fatalf("peer said %q (%v)", line, err)
	}
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", id).Run() })
	io.CopyN(io.Discard, br, 100)
	stdout.Close() // like `| head -c 100`
	if code := testutil.WaitExit(t, cmd, generous); code != 125 || !strings.Contains(stderr.String(), "output-lost") {
		t.Fatalf("exit %d, stderr %q: want 125 output-lost", code, stderr.String())
	}
	if !testutil.WaitUntil(30*time.Second, func() bool { return !containerExists(id) }) {
		t.Fatalf("container %s still exists after the session", id)
	}
}

// Item 5: a --bind whose source is missing is refused (127), and nothing
// is created on the host.
func TestDockerBindMissingSource(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	r := run(t, supervise(t, get("docker"), []string{"--bind", missing + ":/work"}, "true"), "", generous)
	if r.code != 127 {
		t.Fatalf("exit %d, want 127 (stderr %q)", r.code, r.stderr)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatalf("docker created the missing bind source %s on the host", missing)
	}
}

// Item 6: the hint fits the failure: an unknown image while the daemon
// runs names the image, never "start the Docker daemon".
func TestDockerHints(t *testing.T) {
	r := run(t, supervise(t, get("docker"), []string{"--image", "loki-test:no-such-image"}, "true"), "", generous)
	if r.code != 127 || !strings.Contains(r.stderr, "loki-test:no-such-image is not available") ||
		strings.Contains(r.stderr, "start the Docker daemon") {
		t.Fatalf("unknown image: exit %d, stderr %q", r.code, r.stderr)
	}
}

// Item 8: the peer runs with the image's ENV and WORKDIR unless --env and
// --cwd override them; the host's PATH and HOME never replace the image's.
func TestDockerImageConfig(t *testing.T) {
	img := testutil.DockerImage(t, "loki-test:busybox-env", "ENV FOO=image PATH=/bin:/sbin HOME=/home/agent", "WORKDIR /tmp")
	probe := `echo "cwd=$(pwd) FOO=$FOO PATH=$PATH HOME=$HOME"`
	cases := []struct {
		name  string
		flags []string
		want  string
	}{
		{"image config", nil, "cwd=/tmp FOO=image PATH=/bin:/sbin HOME=/home/agent"},
		{"flags override", []string{"--cwd", "/etc", "--env", "FOO=flag"}, "cwd=/etc FOO=flag PATH=/bin:/sbin HOME=/home/agent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := supervise(t, get("docker"), append([]string{"--image", img}, tc.flags...), "sh", "-c", probe)
			cmd.Env = append(cmd.Env, "PATH=/host/only:"+os.Getenv("PATH"), "HOME=/host/home")
			r := run(t, cmd, "", generous)
			if r.code != 0 || strings.TrimSpace(r.stdout) != tc.want {
				t.Fatalf("exit %d, stdout %q, want %q (stderr %q)", r.code, r.stdout, tc.want, r.stderr)
			}
		})
	}
}

// Item 9: a SIGTERM that arrives before the container exists reaches the
// session once it runs: it is not "killed after it did not end in time".
func TestDockerEarlySignal(t *testing.T) {
	root := t.TempDir()
	cmd := supervise(t, get("docker"), []string{"--stop-timeout", "60s", "--control-root", root}, "sh", "-c", "sleep 1000")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The session's dir is made after the supervisor's handler is up, and
	// long before docker run has created anything. (SigCgt cannot tell:
	// the Go runtime catches SIGTERM from its start, to exit by it.)
	if !testutil.WaitUntil(generous, func() bool {
		m, _ := filepath.Glob(filepath.Join(root, "session-*"))
		return len(m) > 0
	}) {
		t.Fatalf("no session dir appeared in %s (stderr %q)", root, stderr.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	start := time.Now()
	code := testutil.WaitExit(t, cmd, generous)
	// Delivered, the peer is ended by it (128+15 too, with the init's
	// line); undelivered, the session is killed at --stop-timeout, which
	// says so.
	if strings.Contains(stderr.String(), "did not end it in time") {
		t.Fatalf("exit %d after %v, stderr %q: the early SIGTERM was not delivered", code, time.Since(start), stderr.String())
	}
	if time.Since(start) > 30*time.Second {
		t.Fatalf("the session took %v to end on SIGTERM", time.Since(start))
	}
}

// Item 9: after docker run --rm returned, the container is gone already;
// no "docker rm -f" follows (it raced the daemon's own removal).
func TestDockerNoSecondRemove(t *testing.T) {
	real := testutil.RequireDocker(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	wrapper := filepath.Join(dir, "docker")
	script := "#!/bin/sh\necho \"$1\" >> " + log + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r := run(t, supervise(t, get("docker"), []string{"--docker", wrapper}, "true"), "", generous)
	if r.code != 0 {
		t.Fatalf("exit %d (stderr %q)", r.code, r.stderr)
	}
	calls, _ := os.ReadFile(log)
	if strings.Contains(string(calls), "rm\n") {
		t.Fatalf("docker calls %q: rm after a run --rm that ended normally", calls)
	}
}

// Item 7: a daemon that stops answering mid-session does not hold the
// supervisor: --stop-timeout and a second SIGTERM still end it, bounded.
// The daemon is reached through a proxy the test freezes, so the real
// engine (shared) keeps running.
func TestDockerHungDaemon(t *testing.T) {
	cases := []struct {
		name    string
		flags   []string
		signals int
	}{
		{"stop timeout", []string{"--stop-timeout", "2s"}, 1},
		{"second SIGTERM", []string{"--stop-timeout", "120s"}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			px := newDockerProxy(t)
			cmd, id, stderr := dockerReady(t, tc.flags, "sleep 1000", "DOCKER_HOST=unix://"+px.path)
			px.freeze()
			t.Cleanup(px.thaw)
			start := time.Now()
			for i := 0; i < tc.signals; i++ {
				cmd.Process.Signal(syscall.SIGTERM)
				time.Sleep(200 * time.Millisecond)
			}
			code := testutil.WaitExit(t, cmd, 60*time.Second)
			took := time.Since(start)
			if code != 128+15 || took > 20*time.Second {
				t.Fatalf("exit %d after %v, want 143 within 20 s (stderr %q)", code, took, stderr.String())
			}
			px.thaw()
			exec.Command("docker", "rm", "-f", id).Run()
			t.Logf("supervisor ended %v after SIGTERM with the daemon frozen", took.Round(time.Millisecond))
		})
	}
}

// dockerProxy relays a unix socket to the engine's until frozen; frozen,
// it relays nothing more in either direction and answers no new client.
type dockerProxy struct {
	path   string
	mu     sync.Mutex
	cond   *sync.Cond
	frozen bool
	ln     net.Listener
}

func newDockerProxy(t *testing.T) *dockerProxy {
	t.Helper()
	testutil.RequireDocker(t)
	target := "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		target = strings.TrimPrefix(h, "unix://")
	}
	dir, err := os.MkdirTemp("", "loki-dproxy-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	px := &dockerProxy{path: filepath.Join(dir, "docker.sock")}
	px.cond = sync.NewCond(&px.mu)
	if px.ln, err = net.Listen("unix", px.path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.thaw(); px.ln.Close() })
	go func() {
		for {
			c, err := px.ln.Accept()
			if err != nil {
				return
			}
			go func() {
				px.wait()
				up, err := net.Dial("unix", target)
				if err != nil {
					c.Close()
					return
				}
				go px.pipe(up, c)
				px.pipe(c, up)
			}()
		}
	}()
	return px
}

func (px *dockerProxy) wait() {
	px.mu.Lock()
	for px.frozen {
		px.cond.Wait()
	}
	px.mu.Unlock()
}

func (px *dockerProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		px.wait()
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (px *dockerProxy) freeze() { px.mu.Lock(); px.frozen = true; px.mu.Unlock() }
func (px *dockerProxy) thaw() {
	px.mu.Lock()
	px.frozen = false
	px.cond.Broadcast()
	px.mu.Unlock()
}

// Item 1: an image whose USER is not root runs: loki-init, as that user,
// can read the lease (the supervisor makes it readable to that group);
// names resolve through the image's own /etc/passwd and /etc/group, and
// HOME is that user's home. (Before: 124 after the lease, no line.)
func TestDockerNonRootUser(t *testing.T) {
	files := map[string]string{
		"etc/passwd": "root:x:0:0:root:/root:/bin/sh\nagent:x:1234:1234:agent:/home/agent:/bin/sh\n",
		"etc/group":  "root:x:0:\nagent:x:1234:\nstaff:x:50:\n",
	}
	cases := []struct {
		name, user string
		flags      []string
		want       string
	}{
		{"numeric", "1000:1000", nil, "uid=1000 gid=1000 HOME=/"},
		{"name", "agent", nil, "uid=1234 gid=1234 HOME=/home/agent"},
		{"name and group", "agent:staff", nil, "uid=1234 gid=50 HOME=/home/agent"},
		{"--user wins", "agent", []string{"--user", "2000:2000"}, "uid=2000 gid=2000 HOME=/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tag := "loki-test:busybox-user-" + strings.NewReplacer(":", "-").Replace(tc.user)
			img := testutil.DockerImageFiles(t, tag, files, "USER "+tc.user)
			flags := append([]string{"--image", img}, tc.flags...)
			r := run(t, supervise(t, get("docker"), flags, "sh", "-c", `echo "uid=$(id -u) gid=$(id -g) HOME=$HOME"`), "", generous)
			if r.code != 0 || strings.TrimSpace(r.stdout) != tc.want {
				t.Fatalf("exit %d, stdout %q, want %q (stderr %q)", r.code, r.stdout, tc.want, r.stderr)
			}
		})
	}
}
