package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/doctor"
	"github.com/loki-sh/loki/internal/session/isolation/namespace"
	"github.com/loki-sh/loki/internal/session/peerenv"
)

// probeTimeout bounds one real session doctor starts.
const probeTimeout = 60 * time.Second

// probeSessions replaces what doctor only looked at by the real thing: a
// default session started from the user's cwd, and an oci session per
// runtime found, each running this binary as its agent. A check that
// says ok has started a session the way `session` would.
func probeSessions(r *doctor.Report, self string) {
	if runtime.GOOS != "linux" {
		return
	}
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "/"
	}
	err = sessionProbe(self, cwd, nil, self)
	r.Set(doctor.Check{Name: "default session here", OK: err == nil, Needed: true,
		Detail: detail(err, "loki-supervise session ran an agent from "+cwd),
		Fix:    "the line above names it; else run from another dir, or --isolation oci|none"})
	for _, rt := range []string{"crun", "runc"} {
		prev, ok := check(r, rt)
		if !ok || !prev.OK {
			continue
		}
		err := ociProbe(self, rt)
		c := prev
		c.OK = err == nil
		if err != nil {
			c.Detail = err.Error()
			c.Fix = "the line above names it (as non-root: rootless " + rt + " needs user namespaces and a writable XDG_RUNTIME_DIR)"
		} else {
			c.Detail += "; a session ran"
		}
		r.Set(c)
	}
	env := peerenv.Policy{}.Build(os.Environ())
	if plan, err := agentFiles("auto", namespace.Name, cwd, env, nil, confine.Policy{}); err == nil {
		view := policyView(namespace.Name, cwd, confine.Policy{}, plan)
		r.Policy = &view
	}
}

func check(r *doctor.Report, name string) (doctor.Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return doctor.Check{}, false
}

// ociProbe runs this binary as the agent of an oci session on an empty
// rootfs (it is static: bound in read-only, it needs nothing else).
func ociProbe(self, rt string) error {
	rootfs, err := os.MkdirTemp("", "loki-doctor-rootfs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(rootfs)
	// A private user namespace's root resolves it as "others".
	if err := os.Chmod(rootfs, 0o755); err != nil {
		return err
	}
	return sessionProbe(self, "/", []string{"--isolation", "oci", "--runtime", rt, "--rootfs", rootfs, "--bind", self + ":/probe:ro"}, "/probe")
}

// sessionProbe runs `self session FLAGS -- AGENT doctor --self-probe` in
// dir with stdin at EOF; the error is the session's last stderr line.
func sessionProbe(self, dir string, flags []string, agent string) error {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	args := append([]string{"session", "--agent-state", "none"}, flags...)
	args = append(args, "--", agent, "doctor", "--self-probe")
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		return nil
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	line := strings.TrimPrefix(lines[len(lines)-1], "loki-supervise: ")
	if strings.Contains(line, "message is above") && len(lines) > 1 {
		line = lines[len(lines)-2] + " (" + line + ")"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if line == "" {
			line = "no message"
		}
		return fmt.Errorf("session exited %d: %s", ee.ExitCode(), line)
	}
	return fmt.Errorf("session: %v", err)
}

func detail(err error, ok string) string {
	if err != nil {
		return err.Error()
	}
	return ok
}
