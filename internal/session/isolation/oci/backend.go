package oci

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/cgroup"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/isolation/sockdiag"
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
	o := b.Options.WithPolicy(req.Confine)
	o.ControlDir = req.ControlDir
	o.ControlRoot = req.ControlRoot
	o.InitArgs = req.InitArgs
	if o.HostSockets, err = sockdiag.Paths(); err != nil {
		return nil, confine.NoSocketList(Name, err)
	}
	if o.PidsLimit > 0 && !PidsControllerAvailable() {
		// The default limit only (Admit refused a --pids-max).
		if b.Warn != nil {
			b.Warn("pids limit not enforced: this host has no pids cgroup controller")
		}
		o.PidsLimit = 0
	}
	p := &process{rt: rt, id: newID(), shim: flavour == "crun" && needsHybridShim(), self: b.Self, done: make(chan struct{})}
	// The session's own cgroup, with the same limits as linux.resources:
	// the runtime removes the container's cgroup as the container ends,
	// and with it the counters of what the kernel did at a limit.
	if req.Scratch != "" {
		r := o.Confine.Resources
		if o.PidsLimit == 0 {
			r.PidsMax = confine.Unlimited
		}
		if p.cg, err = cgroup.ForSession(req.Scratch, r, b.Warn); err != nil {
			return nil, err
		}
		if path, ok := p.cg.UnifiedPath(); ok {
			o.CgroupsPath = path + "/" + p.id
		}
	}
	fail := func(err error) (session.Process, error) {
		p.cg.Remove()
		if p.bundle != "" {
			os.RemoveAll(p.bundle)
		}
		return nil, err
	}
	spec, err := Config(o)
	if err != nil {
		return fail(err)
	}
	if o.UserNS != nil {
		if err := CheckIDMap(o, rt, flavour); err != nil {
			return fail(err)
		}
		if err := makeMountPoints(o.Rootfs, spec.Mounts); err != nil {
			return fail(err)
		}
	}
	data, err := Marshal(spec)
	if err != nil {
		return fail(err)
	}
	// Inside the session's private dir when there is one: removed with it,
	// and swept with it if the supervisor is killed.
	if req.Scratch != "" {
		if err := session.MakeScratch(req.Scratch); err != nil {
			return fail(err)
		}
	}
	if p.bundle, err = os.MkdirTemp(req.Scratch, "bundle-"); err != nil {
		return fail(err)
	}
	bundle := p.bundle
	if err := os.WriteFile(filepath.Join(bundle, "config.json"), data, 0o600); err != nil {
		return fail(err)
	}
	if err := writeRecord(bundle, flavour, p.id); err != nil {
		return fail(err)
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
		return fail(fmt.Errorf("%w: %s: %v: %s", ErrRuntimeNotFound, rt, err, RuntimeFixHint))
	}
	go func() {
		session.AwaitExit(p.cmd.Process)
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	if _, nested := p.cg.UnifiedPath(); p.cg != nil && !nested {
		// cgroup v1: the container's init joins the session's cgroup
		// before Start returns. loki-init starts nothing before a lease
		// renewal, and renewals begin once Start has returned: the peer
		// and all it starts are born inside.
		if err := p.adopt(); err != nil {
			p.startErr = fmt.Errorf("%w: the session's cgroup: %v", ErrNotCreated, err)
			p.Kill()
		}
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
	cg                      *cgroup.Cgroup // nil: no limits
	startErr                error          // the session's cgroup could not take the container
	done                    chan struct{}  // closed once the runtime has been waited for
	waitErr                 error
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
	<-p.done
	err := p.waitErr
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
	if p.startErr != nil {
		exit.Err = p.startErr
	}
	exit.Limit = p.cg.Hit()
	return exit
}

// InitPID is the container's init as the host sees it, from the
// runtime's pid file (0 before the runtime wrote it).
func (p *process) InitPID() int {
	pid, _ := readPid(p.pidFile)
	return pid
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
// exit), the session's cgroup and the bundle.
func (p *process) Close() error {
	p.quiet("delete", "-f", p.id)
	err := p.cg.Remove()
	if rerr := os.RemoveAll(p.bundle); err == nil {
		err = rerr
	}
	return err
}

func (p *process) quiet(args ...string) error {
	cmd := p.command(args...)
	return cmd.Run()
}

// readPid reads a runtime's pid file.
func readPid(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, err == nil && pid > 0
}
