package docker

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
	"github.com/loki-sh/loki/internal/session/isolation/oci"
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
	ErrNotFound   = errors.New("docker CLI not found")
	ErrOptions    = errors.New("invalid docker options")
	ErrNotCreated = errors.New("docker did not create the container")
)

// FixHint is the one-line fix printed with ErrNotFound.
const FixHint = "install the Docker CLI and start a daemon, or use --isolation namespace|oci"

// DaemonFixHint is the one-line fix printed with ErrNotCreated.
const DaemonFixHint = "start the Docker daemon (or point DOCKER_HOST at a running one), or use --isolation namespace|oci"

// runFailed is docker run's own exit code for "the container never ran"
// (no daemon, unknown image, bad flag). loki-init's 125 looks the same,
// so the cid file tells them apart: docker writes it once it has created
// the container.
const runFailed = 125

// Options are the inputs of Args.
type Options struct {
	Docker     string // CLI path or name ("docker")
	Image      string
	Init       string // host path of the static loki-init
	ControlDir string // host path of the control dir
	// ControlRoot is the host dir holding every session's control dir
	// ("" = ControlDir): no bind may show it to the peer.
	ControlRoot    string
	InitArgs       []string
	Name           string // container name (unique per session)
	PidsLimit      int64
	WritableRootfs bool
	User           string // --user value, "" = image default
	Network        string // --network value, "" = docker's default bridge
	Binds          []string
	// CIDFile is where docker writes the container id once the container
	// exists ("" = none). It must not exist beforehand.
	CIDFile string
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
	if o.Network != "" {
		args = append(args, "--network", o.Network)
	}
	if o.CIDFile != "" {
		args = append(args, "--cidfile", o.CIDFile)
	}
	masks, err := controlRootMasks(o)
	if err != nil {
		return nil, err
	}
	for _, b := range o.Binds {
		args = append(args, "--volume", b)
	}
	args = append(args, masks...)
	args = append(args, o.Image)
	args = append(args, o.InitArgs...)
	return append(args, ControlPath), nil
}

// controlRootMasks parses the binds and covers every place where one would
// show the host's control root (every session's lease) with an empty
// read-only tmpfs, the rule of the oci backend. Docker mounts deeper
// destinations after shallower ones, so a mask inside a bind covers it;
// a bind of the control root itself would need a mask at the bind's own
// destination, which docker refuses as a duplicate, so it is refused here.
func controlRootMasks(o Options) ([]string, error) {
	root := o.ControlRoot
	if root == "" {
		root = o.ControlDir
	}
	var binds []oci.Bind
	for _, s := range o.Binds {
		b, err := oci.ParseBind(s)
		if err != nil {
			return nil, fmt.Errorf("%w: --bind %q: want SRC:DST[:ro|:rw], both paths absolute", ErrOptions, s)
		}
		binds = append(binds, b)
	}
	dests, err := oci.ControlRootViews(root, binds, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	var args []string
	for _, d := range dests {
		for _, b := range binds {
			if filepath.Clean(b.Destination) == d {
				return nil, fmt.Errorf("%w: --bind %s:%s exposes the control root itself (other sessions' leases)", ErrOptions, b.Source, b.Destination)
			}
		}
		if strings.ContainsAny(d, ",\"\n") {
			return nil, fmt.Errorf("%w: path %q cannot be passed to docker --mount", ErrOptions, d)
		}
		args = append(args, "--mount", "type=tmpfs,destination="+d+",readonly,tmpfs-mode=0700,tmpfs-size=65536")
	}
	return args, nil
}

// Backend runs sessions through the Docker CLI.
type Backend struct{ Options Options }

func (b *Backend) Name() string    { return Name }
func (b *Backend) NeedsInit() bool { return true }

func (b *Backend) Start(req session.Request) (session.Process, error) {
	o := b.Options
	o.ControlDir, o.ControlRoot, o.InitArgs = req.ControlDir, req.ControlRoot, req.InitArgs
	if req.Scratch != "" && o.CIDFile == "" {
		o.CIDFile = filepath.Join(req.Scratch, "docker.cid")
	}
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
	return &process{cmd: cmd, docker: path, name: o.Name, cidFile: o.CIDFile}, nil
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
	cmd                   *exec.Cmd
	docker, name, cidFile string
}

func (p *process) Wait() session.Exit {
	err := p.cmd.Wait()
	code, sig, ok := exitcode.Status(err)
	switch {
	case !ok:
		return session.Exit{Code: -1, Err: err}
	case sig > 0:
		return session.Exit{Signal: sig}
	default:
		if code == runFailed && p.neverCreated() {
			// docker itself failed (its message is above): the session
			// never ran, which is 127, not a code of the session's.
			return session.Exit{Code: code, Err: fmt.Errorf("%w (docker run exited %d; its message is above): %s",
				ErrNotCreated, code, DaemonFixHint)}
		}
		return session.Exit{Code: code}
	}
}

// neverCreated: no cid file, so docker never created the container.
func (p *process) neverCreated() bool {
	if p.cidFile == "" {
		return false // unknown: pass the code on as it is
	}
	_, err := os.Stat(p.cidFile)
	return errors.Is(err, os.ErrNotExist)
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
