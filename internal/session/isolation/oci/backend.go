package oci

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/confine"
)

// Name is the --isolation value of this backend.
const Name = "oci"

// Sentinel errors.
var (
	ErrRuntimeNotFound = errors.New("OCI runtime not found")
	ErrNotCreated      = errors.New("the OCI runtime did not start the container")
)

// RuntimeFixHint is the one-line fix printed with ErrRuntimeNotFound.
const RuntimeFixHint = "install crun or runc (apt-get install crun runc) or pass --runtime PATH"

// Backend runs loki-init as the process of an OCI container.
type Backend struct {
	Runtime string // "crun", "runc", or a path to either
	Options Options
	// Self implements ShimCommand ("" = /proc/self/exe).
	Self string
	// Warn receives one-line notices (e.g. pids limit not enforced).
	Warn func(string)
}

func (b *Backend) Name() string { return Name }

// DirectStdinFD: Request.HostStdin reaches the init as fd 3 (the
// runtime's --preserve-fds 1).
func (b *Backend) DirectStdinFD() int { return 3 }
func (b *Backend) NeedsInit() bool    { return true }

// ResolveRuntime finds the runtime binary and tells crun from runc by name.
func ResolveRuntime(name string) (path, flavour string, err error) {
	if name == "" {
		name = "crun"
	}
	path, err = exec.LookPath(name)
	if err != nil {
		return "", "", fmt.Errorf("%w: %s: %s", ErrRuntimeNotFound, name, RuntimeFixHint)
	}
	path, _ = filepath.Abs(path)
	flavour = filepath.Base(path)
	if !strings.Contains(flavour, "crun") {
		flavour = "runc" // runc and runc-compatible CLIs
	} else {
		flavour = "crun"
	}
	return path, flavour, nil
}

// Start writes the bundle and runs the container in the foreground.
func (b *Backend) Start(req session.Request) (session.Process, error) {
	rt, flavour, err := ResolveRuntime(b.Runtime)
	if err != nil {
		return nil, err
	}
	o := b.Options
	o.ControlDir = req.ControlDir
	o.ControlRoot = req.ControlRoot
	o.InitArgs = req.InitArgs
	o.Confine = req.Confine
	if o.PidsLimit > 0 && !pidsControllerAvailable() {
		if o.Confine.Resources.PidsMax > 0 {
			return nil, confine.Refuse(Name, "--pids-max on this host", "it has no pids cgroup controller; drop --pids-max (loki-supervise doctor)")
		}
		if b.Warn != nil {
			b.Warn("pids limit not enforced: this host has no pids cgroup controller")
		}
		o.PidsLimit = 0
	}
	spec, err := Config(o)
	if err != nil {
		return nil, err
	}
	data, err := Marshal(spec)
	if err != nil {
		return nil, err
	}
	// Inside the session's private dir when there is one: removed with it,
	// and swept with it if the supervisor is killed.
	bundle, err := os.MkdirTemp(req.Scratch, "bundle-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(bundle, "config.json"), data, 0o600); err != nil {
		os.RemoveAll(bundle)
		return nil, err
	}
	p := &process{rt: rt, id: newID(), bundle: bundle, shim: flavour == "crun" && needsHybridShim(), self: b.Self}
	if err := writeRecord(bundle, flavour, p.id); err != nil {
		os.RemoveAll(bundle)
		return nil, err
	}
	p.pidFile = filepath.Join(bundle, "init.pid")
	args := []string{"run", "--bundle", bundle, "--pid-file", p.pidFile}
	if req.HostStdin != nil {
		// The client's own stdin as fd 3 of the container's process.
		args = append(args, "--preserve-fds", "1")
	}
	p.cmd = p.command(append(args, p.id)...)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = req.Stdin, req.Stdout, req.Stderr
	if req.HostStdin != nil {
		p.cmd.ExtraFiles = []*os.File{req.HostStdin}
	}
	// Own process group: terminal signals go to the supervisor only.
	if p.cmd.SysProcAttr == nil {
		p.cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	p.cmd.SysProcAttr.Setpgid = true
	if err := p.cmd.Start(); err != nil {
		os.RemoveAll(bundle)
		return nil, fmt.Errorf("%w: %s: %v: %s", ErrRuntimeNotFound, rt, err, RuntimeFixHint)
	}
	return p, nil
}

func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return "loki-" + hex.EncodeToString(b[:])
}

type process struct {
	rt, id, bundle, pidFile string
	shim                    bool
	self                    string
	cmd                     *exec.Cmd
}

// command builds "<runtime> args..." (through the cgroup shim for crun on a
// hybrid host). The runtime gets a minimal environment: no secrets.
func (p *process) command(args ...string) *exec.Cmd {
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	if !p.shim {
		return &exec.Cmd{Path: p.rt, Args: append([]string{p.rt}, args...), Env: env}
	}
	self := p.self
	if self == "" {
		self = "/proc/self/exe"
	}
	cmd := &exec.Cmd{Path: self, Args: append([]string{"loki-supervise", ShimCommand, p.rt}, args...), Env: env}
	cmd.SysProcAttr = shimAttr()
	return cmd
}

func (p *process) Wait() session.Exit {
	err := p.cmd.Wait()
	var exit session.Exit
	code, sig, ok := exitcode.Status(err)
	switch {
	case !ok:
		exit.Err = err
	case sig > 0:
		exit.Signal = sig
	default:
		exit.Code = code
	}
	if _, statErr := os.Stat(p.pidFile); statErr != nil && exit.Signal == 0 && exit.Code != 0 {
		exit.Err = fmt.Errorf("%w (%s exited %d; its message is above)", ErrNotCreated, filepath.Base(p.rt), exit.Code)
	}
	return exit
}

// Signal asks the runtime to deliver sig to the container's init: the
// runtime knows the container's pid and checks it is still that container.
func (p *process) Signal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("unsupported signal %v", sig)
	}
	return p.quiet("kill", p.id, fmt.Sprint(int(s)))
}

func (p *process) Kill() error {
	if err := p.quiet("kill", p.id, "KILL"); err != nil {
		return p.cmd.Process.Kill()
	}
	return nil
}

// Close removes the container (normally already gone: run deletes it on
// exit) and the bundle.
func (p *process) Close() error {
	p.quiet("delete", "-f", p.id)
	return os.RemoveAll(p.bundle)
}

func (p *process) quiet(args ...string) error {
	cmd := p.command(args...)
	return cmd.Run()
}
