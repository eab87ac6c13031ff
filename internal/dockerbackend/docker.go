package dockerbackend

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/loki-sh/loki/internal/session"
)

// Name is the --isolation value of this backend.
const Name = "docker"

// Fixed paths inside the container (the same as the oci backend's).
const (
	InitPath    = "/.loki/init"
	ControlPath = "/.loki/control"
)

// Sentinel errors.
var (
	ErrNotFound = errors.New("docker CLI not found")
	ErrOptions  = errors.New("invalid docker options")
)

// FixHint is the one-line fix printed with ErrNotFound.
const FixHint = "install the Docker CLI and start a daemon, or use --isolation namespace|oci"

// Options are the inputs of Args.
type Options struct {
	Docker         string // CLI path or name ("docker")
	Image          string
	Init           string // host path of the static loki-init
	ControlDir     string // host path of the control dir
	InitArgs       []string
	Name           string // container name (unique per session)
	PidsLimit      int64
	WritableRootfs bool
	User           string // --user value, "" = image default
	Binds          []string
}

// Args returns the complete docker command line.
func Args(o Options) ([]string, error) {
	if o.Image == "" {
		return nil, fmt.Errorf("%w: --image is required", ErrOptions)
	}
	for _, p := range append([]string{o.Init, o.ControlDir}, o.Binds...) {
		if strings.ContainsAny(p, ",\"\n") {
			return nil, fmt.Errorf("%w: path %q cannot be passed to docker --mount", ErrOptions, p)
		}
	}
	docker := o.Docker
	if docker == "" {
		docker = "docker"
	}
	args := []string{docker, "run", "-i", "--rm",
		"--name", o.Name,
		"--entrypoint", InitPath,
		"--mount", "type=bind,source=" + o.Init + ",target=" + InitPath + ",readonly",
		"--mount", "type=bind,source=" + o.ControlDir + ",target=" + ControlPath + ",readonly",
		"--cap-drop", "ALL",
		"--security-opt", "no-new-privileges",
		"--log-driver", "none",
	}
	if o.PidsLimit > 0 {
		args = append(args, "--pids-limit", strconv.FormatInt(o.PidsLimit, 10))
	}
	if !o.WritableRootfs {
		args = append(args, "--read-only", "--tmpfs", "/tmp")
	}
	if o.User != "" {
		args = append(args, "--user", o.User)
	}
	for _, b := range o.Binds {
		args = append(args, "--volume", b)
	}
	args = append(args, o.Image)
	args = append(args, o.InitArgs...)
	return append(args, ControlPath), nil
}

// Backend runs sessions through the Docker CLI.
type Backend struct{ Options Options }

func (b *Backend) Name() string    { return Name }
func (b *Backend) NeedsInit() bool { return true }

func (b *Backend) Start(req session.Request) (session.Process, error) {
	o := b.Options
	o.ControlDir, o.InitArgs = req.ControlDir, req.InitArgs
	if o.Name == "" {
		var r [8]byte
		rand.Read(r[:])
		o.Name = "loki-" + hex.EncodeToString(r[:])
	}
	args, err := Args(o)
	if err != nil {
		return nil, err
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrNotFound, args[0], FixHint)
	}
	cmd := &exec.Cmd{Path: path, Args: args, Stdin: req.Stdin, Stdout: req.Stdout, Stderr: req.Stderr,
		Env: dockerEnv(), SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %v: %s", ErrNotFound, err, FixHint)
	}
	return &process{cmd: cmd, docker: path, name: o.Name}, nil
}

// dockerEnv passes only what the CLI needs to find its daemon and config.
func dockerEnv() []string {
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, k := range []string{"HOME", "DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

type process struct {
	cmd          *exec.Cmd
	docker, name string
}

func (p *process) Wait() session.Exit {
	err := p.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return session.Exit{}
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return session.Exit{Signal: int(ws.Signal())}
		}
		// 125-127 from docker run itself mean the container never ran; they
		// coincide with init codes, so they are passed on as they are.
		return session.Exit{Code: ee.ExitCode()}
	default:
		return session.Exit{Code: -1, Err: err}
	}
}

func (p *process) Signal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("unsupported signal %v", sig)
	}
	return exec.Command(p.docker, "kill", "--signal", strconv.Itoa(int(s)), p.name).Run()
}

func (p *process) Kill() error {
	if err := exec.Command(p.docker, "kill", p.name).Run(); err != nil {
		return p.cmd.Process.Kill()
	}
	return nil
}

func (p *process) Close() error {
	return exec.Command(p.docker, "rm", "-f", p.name).Run()
}
