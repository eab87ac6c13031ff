//go:build linux

package session

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
)

// TestCannotStart: a backend that cannot start exits 127 with exactly one
// line on stderr that names the fix.
func TestCannotStart(t *testing.T) {
	testutil.RequireRoot(t)
	sup := testutil.Binary(t, "loki-supervise")
	init := testutil.Binary(t, "loki-init")
	empty := t.TempDir()
	cases := []struct {
		name string
		args []string
		fix  string
	}{
		{"missing OCI runtime", []string{"--init", init, "--isolation", "oci", "--runtime", "/nonexistent/crun", "--rootfs", empty}, "install crun or runc"},
		{"missing OCI runtime by name", []string{"--init", init, "--isolation", "oci", "--runtime", "no-such-runtime-xyz", "--rootfs", empty}, "--runtime PATH"},
		{"missing loki-init", []string{"--init", "/nonexistent/loki-init"}, "--init PATH"},
		{"missing docker CLI", []string{"--init", init, "--isolation", "docker", "--docker", "/nonexistent/docker", "--image", "x"}, "install the Docker CLI"},
		// The missing dir is named, not blamed on permissions or the kernel.
		{"missing cwd", []string{"--init", init, "--cwd", "/nonexistent"}, "/nonexistent does not exist"},
		{"missing cwd parent", []string{"--init", init, "--cwd", "/nonexistent/x"}, "/nonexistent does not exist"},
		{"missing cwd, host ids", []string{"--init", init, "--userns", "host", "--cwd", "/nonexistent/x"}, "/nonexistent does not exist"},
		{"missing cwd, none", []string{"--isolation", "none", "--cwd", "/nonexistent/x"}, "/nonexistent does not exist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"session"}, tc.args...)
			args = append(args, "--", "true")
			r := run(t, exec.Command(sup, args...), "", generous)
			if r.code != 127 {
				t.Fatalf("exit %d, want 127 (stderr %q)", r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "loki-supervise: ") || !strings.Contains(lines[0], tc.fix) {
				t.Fatalf("stderr %q: want one loki-supervise line naming %q", r.stderr, tc.fix)
			}
		})
	}
}

// TestDockerWithoutDaemon: the Docker CLI is there but no daemon answers.
// docker run fails before any container exists; that is "the backend could
// not start" (127) with a last line naming the fix, never docker's 125
// passed on as if the session had said it.
func TestDockerWithoutDaemon(t *testing.T) {
	docker := testutil.RequireCommand(t, "docker")
	sup := testutil.Binary(t, "loki-supervise")
	init := testutil.Binary(t, "loki-init")
	root := t.TempDir()
	cmd := exec.Command(sup, "session", "--init", init, "--control-root", root, "--isolation", "docker",
		"--docker", docker, "--image", "busybox", "--", "true")
	cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+root+"/no-daemon.sock", "DOCKER_CONTEXT=")
	r := run(t, cmd, "", generous)
	if r.code != 127 {
		t.Fatalf("exit %d, want 127 (stderr %q)", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "loki-supervise: ") || !strings.Contains(last, "start the Docker daemon") {
		t.Fatalf("last stderr line %q does not name the fix (stderr %q)", last, r.stderr)
	}
}

// TestRuntimeRefusesContainer: a runtime that exists but cannot create the
// container (rootfs without a /bin/sh is fine for it, a missing rootfs is
// not) ends with 127, not with a code a peer could have produced.
func TestRuntimeRefusesContainer(t *testing.T) {
	for _, rt := range []string{"crun", "runc"} {
		t.Run(rt, func(t *testing.T) {
			testutil.RequireRoot(t)
			testutil.RequireCommand(t, rt)
			sup := testutil.Binary(t, "loki-supervise")
			init := testutil.Binary(t, "loki-init")
			rootfs := t.TempDir()
			reachableByOthers(t, rootfs)
			// A rootfs whose mount points are files makes every runtime fail
			// before the container process exists.
			if err := os.WriteFile(rootfs+"/proc", nil, 0o644); err != nil {
				t.Fatal(err)
			}
			r := run(t, exec.Command(sup, "session", "--init", init, "--isolation", "oci", "--runtime", rt, "--rootfs", rootfs, "--", "true"), "", generous)
			if r.code != 127 {
				t.Fatalf("exit %d, want 127 (stderr %q)", r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, "did not start the container") {
				t.Fatalf("stderr %q does not say the container never started", r.stderr)
			}
		})
	}
}

// TestOCISpecAcceptedByRuntimes runs the printed oci-spec config directly
// with each runtime (no loki-supervise in between): the runtime must accept
// it and start loki-init, which then exits 124 for want of a renewed lease,
// proving the process, mounts and paths in the config are right.
func TestOCISpecAcceptedByRuntimes(t *testing.T) {
	for _, rt := range []string{"crun", "runc"} {
		t.Run(rt, func(t *testing.T) {
			testutil.RequireRoot(t)
			rtPath := testutil.RequireCommand(t, rt)
			sup := testutil.Binary(t, "loki-supervise")
			init := testutil.Binary(t, "loki-init")
			ctl := t.TempDir()
			if err := os.WriteFile(ctl+"/lease", []byte("01234567"), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(sup, "oci-spec", "--init", init, "--rootfs", rootfs(t), "--control-dir", ctl,
				"--lease-duration", "1s").Output()
			if err != nil {
				t.Fatalf("oci-spec: %v", err)
			}
			bundle := t.TempDir()
			if err := os.WriteFile(bundle+"/config.json", out, 0o600); err != nil {
				t.Fatal(err)
			}
			testutil.PrepareOCIUserNS(t, out, rootfs(t), ctl)
			id := "loki-spec-test-" + rt
			runCmd := exec.Command(rtPath, "run", "--bundle", bundle, id)
			if rt == "crun" {
				// crun refuses hybrid cgroup hosts; the supervisor's shim is
				// what makes it work here, so use the same path.
				runCmd = exec.Command(sup, "__oci-cgroup-shim", rtPath, "run", "--bundle", bundle, id)
				runCmd.SysProcAttr = shimAttrForTest()
			}
			t.Cleanup(func() { exec.Command(rtPath, "delete", "-f", id).Run() })
			r := run(t, runCmd, "", generous)
			// 124 can only come from loki-init itself: it started, found
			// its control dir, and saw no renewal of the static lease.
			if r.code != 124 {
				t.Fatalf("exit %d, stderr %q; want loki-init's 124 (no renewal)", r.code, r.stderr)
			}
		})
	}
}

// reachableByOthers opens a test's temp dir and its parent (the test's
// own, never the host's /tmp) to others: as root, an oci container's root
// is "others" to the host (a user namespace of its own) and must reach
// its rootfs.
func reachableByOthers(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDockerMasksControlRoot: a --bind whose source contains the control
// root (every session's lease) reaches docker with an empty read-only
// tmpfs over that view, and a bind of the control root itself is refused
// before docker runs. A stand-in docker CLI records its command lines (run,
// then the rm -f that always follows).
func TestDockerMasksControlRoot(t *testing.T) {
	sup := testutil.Binary(t, "loki-supervise")
	init := testutil.Binary(t, "loki-init")
	parent := t.TempDir()
	root := filepath.Join(parent, "control-root")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	argsFile := filepath.Join(t.TempDir(), "args")
	fake := filepath.Join(t.TempDir(), "docker")
	// It answers the image inspect that comes first with an empty config.
	script := "#!/bin/sh\nif [ \"$1 $2\" = 'image inspect' ]; then echo '{}'; exit 0; fi\nprintf '%s\\n' \"$@\" >> " + argsFile + "\nexit 125\n"
	if err := os.WriteFile(fake, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	session := func(bind string) result {
		return run(t, exec.Command(sup, "session", "--init", init, "--control-root", root, "--isolation", "docker",
			"--docker", fake, "--image", "x", "--bind", bind, "--", "true"), "", generous)
	}
	if r := session(parent + ":/host:ro"); r.code != 127 {
		t.Fatalf("exit %d, want 127 from the stand-in's 125 (stderr %q)", r.code, r.stderr)
	}
	b, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	mask := "type=tmpfs,destination=/host/control-root,readonly,tmpfs-mode=0700,tmpfs-size=65536"
	if !strings.Contains(string(b), "--mount\n"+mask+"\n") {
		t.Fatalf("docker was not given the mask %q:\n%s", mask, b)
	}
	os.Remove(argsFile)
	r := session(root + ":/host")
	if r.code != 127 || !strings.Contains(r.stderr, "exposes the control root itself") {
		t.Fatalf("bind of the control root: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(argsFile); err == nil {
		t.Fatal("docker ran with the control root bound")
	}
}

// TestOCISpecMasksControlRoot: with --control-root, a rootfs that shows the
// host's control root (here a rootfs that contains it) gets a mask over all
// of it, not only over the session's control dir; a control dir outside the
// named root is a usage error.
func TestOCISpecMasksControlRoot(t *testing.T) {
	sup := testutil.Binary(t, "loki-supervise")
	init := testutil.Binary(t, "loki-init")
	rootfs := t.TempDir()
	reachableByOthers(t, rootfs)
	root := filepath.Join(rootfs, "run")
	ctl := filepath.Join(root, "s1", "control")
	if err := os.MkdirAll(ctl, 0o700); err != nil {
		t.Fatal(err)
	}
	masks := func(args ...string) []string {
		t.Helper()
		out, err := exec.Command(sup, append([]string{"oci-spec", "--init", init, "--rootfs", rootfs, "--control-dir", ctl}, args...)...).Output()
		if err != nil {
			t.Fatalf("oci-spec %q: %v", args, err)
		}
		var spec struct {
			Mounts []struct {
				Destination, Type string
				Options           []string
			}
		}
		if err := json.Unmarshal(out, &spec); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range spec.Mounts {
			if m.Type == "tmpfs" && slices.Contains(m.Options, "ro") {
				got = append(got, m.Destination)
			}
		}
		return got
	}
	if got := masks(); !slices.Equal(got, []string{"/run/s1/control"}) {
		t.Errorf("without --control-root: masks %q, want the control dir's view /run/s1/control", got)
	}
	if got := masks("--control-root", root); !slices.Equal(got, []string{"/run"}) {
		t.Errorf("with --control-root: masks %q, want the root's view /run", got)
	}
	r := run(t, exec.Command(sup, "oci-spec", "--init", init, "--rootfs", rootfs, "--control-dir", ctl,
		"--control-root", t.TempDir()), "", generous)
	if r.code != 2 || !strings.Contains(r.stderr, "is not inside --control-root") {
		t.Fatalf("control dir outside the root: exit %d, stderr %q", r.code, r.stderr)
	}
}
