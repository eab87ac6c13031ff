package docker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/cgroup"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/isolation/mounts"
	"github.com/loki-sh/loki/internal/session/isolation/sockdiag"
	"github.com/loki-sh/loki/internal/session/peerenv"
	"github.com/loki-sh/loki/internal/session/seccomp/ocispec"
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
	ErrNotStarted = errors.New("docker created the container but did not start it")
	ErrNoDaemon   = errors.New("no Docker daemon answers")
	ErrNoImage    = errors.New("image not available")
	// ErrEngineLost: the daemon stopped answering while the session ran;
	// how the session ended is the engine's doing, not the peer's.
	ErrEngineLost = errors.New("engine-lost: the Docker daemon went away during the session")
	// ErrOutputLost: the docker CLI, which carries the session's output,
	// ended while the container still ran (e.g. its stdout was closed).
	ErrOutputLost = errors.New("output-lost: the docker CLI ended before the container")
)

// FixHint is the one-line fix printed with ErrNotFound.
const FixHint = "install the Docker CLI and start a daemon, or use --isolation namespace|oci"

// DaemonFixHint is the one-line fix printed when no daemon answers.
const DaemonFixHint = "start the Docker daemon (or point DOCKER_HOST at a running one), or use --isolation namespace|oci"

// ImageFixHint is the one-line fix printed when the image is missing.
const ImageFixHint = "check --image, or make the image available locally (docker pull, docker build, docker import)"

// RefusedFixHint is printed when the daemon answers but refused the
// container (its own message is above).
const RefusedFixHint = "docker's message above names the cause (an option, a --bind source, the image's entrypoint paths)"

// cliTimeout bounds every docker call made besides "docker run" itself
// (kill, rm, inspect, events): a daemon that stops answering must not
// hold the session's signal handling or its end.
const cliTimeout = 10 * time.Second

// killWait is how long Kill waits for docker run to end after docker
// kill before it kills the CLI instead.
const killWait = 3 * time.Second

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
	MemoryMax      int64  // bytes, 0 = none (--memory, and --memory-swap the same: no swap)
	CPUs           string // --cpus, "" = none
	WritableRootfs bool
	User           string // --user value, "" = image default
	Network        string // --network value, "" = docker's default bridge
	Binds          []string
	// Hide are container paths covered by an empty read-only tmpfs, or by
	// /dev/null where the host has a regular file at the same path (the
	// image's own files cannot be looked at from here).
	Hide []string
	// CIDFile is where docker writes the container id once the container
	// exists ("" = none). It must not exist beforehand.
	CIDFile string
	// SeccompProfile is the session's syscall policy as a Docker profile
	// file (WriteSeccompProfile): required, in place of the engine's
	// default profile.
	SeccompProfile string
	// TmpSize caps /tmp and /dev/shm (bytes; 0: docker's defaults).
	TmpSize int64
	// Sockets are host unix sockets shown at their paths (--socket);
	// HostSockets those found at the start (sockdiag), masked where a
	// read-only bind shows them.
	Sockets, HostSockets []string
}

// WriteSeccompProfile writes the session's syscall policy (as the oci
// config's linux.seccomp, whose JSON is Docker's profile format) to
// dir/seccomp.json, 0600, and returns its path. The docker CLI reads it
// and sends it to the engine.
func WriteSeccompProfile(dir string) (string, error) {
	b, err := json.Marshal(ocispec.Seccomp())
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "seccomp.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return "", fmt.Errorf("seccomp profile: %w", err)
	}
	return path, nil
}

// Args returns the complete docker command line.
func Args(o Options) ([]string, error) {
	if o.Image == "" {
		return nil, fmt.Errorf("%w: --image is required", ErrOptions)
	}
	if o.SeccompProfile == "" {
		return nil, fmt.Errorf("%w: no seccomp profile (the session's syscall policy)", ErrOptions)
	}
	for _, p := range append(append([]string{o.Init, o.ControlDir, o.SeccompProfile}, o.Binds...), o.Hide...) {
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
		"--security-opt", "seccomp=" + o.SeccompProfile,
		"--log-driver", "none",
	}
	if o.PidsLimit > 0 {
		args = append(args, "--pids-limit", strconv.FormatInt(o.PidsLimit, 10))
	}
	if o.MemoryMax > 0 {
		m := strconv.FormatInt(o.MemoryMax, 10)
		args = append(args, "--memory", m, "--memory-swap", m)
	}
	if o.CPUs != "" {
		args = append(args, "--cpus", o.CPUs)
	}
	tmp := "/tmp"
	if o.TmpSize > 0 {
		size := strconv.FormatInt(o.TmpSize, 10)
		tmp += ":size=" + size
		args = append(args, "--shm-size", size)
	}
	if !o.WritableRootfs {
		args = append(args, "--read-only", "--tmpfs", tmp)
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
	var binds []mounts.Bind
	for _, b := range o.Binds {
		pb, err := mounts.ParseBind(b)
		if err != nil {
			return nil, fmt.Errorf("%w: --bind %q: want SRC:DST[:ro|:rw], both paths absolute", ErrOptions, b)
		}
		if err := checkSource(pb.Source); err != nil {
			return nil, err
		}
		binds = append(binds, pb)
	}
	// The host's socket dirs, private; its sockets found at the start,
	// masked; those --socket names, shown at their paths (the oci rule).
	hv := mounts.SocketViews("", binds, confine.PrivateHostDirs(), o.HostSockets, o.Sockets, nil)
	// --mount, not --volume: a missing source is an error, never a new
	// directory created on the host (the oci backend's rule).
	for _, pb := range binds {
		if slices.Contains(hv.Private, filepath.Clean(pb.Destination)) {
			continue // the private dir's tmpfs below takes its place (docker refuses two mounts at one path)
		}
		m := "type=bind,source=" + pb.Source + ",target=" + pb.Destination
		if pb.ReadOnly {
			m += ",readonly"
		}
		args = append(args, "--mount", m)
	}
	for _, d := range hv.Private {
		args = append(args, "--mount", "type=tmpfs,destination="+d+",tmpfs-mode=0755,tmpfs-size="+strconv.FormatInt(confine.RunSize, 10))
	}
	for _, m := range hv.Masked {
		args = append(args, "--mount", "type=bind,source=/dev/null,target="+m+",readonly")
	}
	for _, s := range o.Sockets {
		args = append(args, "--mount", "type=bind,source="+s+",target="+s)
	}
	args = append(args, masks...)
	for _, h := range o.Hide {
		// Docker mounts deeper destinations last, so a hide inside a
		// bind covers that part of it.
		if st, err := os.Stat(h); err == nil && st.Mode().IsRegular() {
			args = append(args, "--mount", "type=bind,source=/dev/null,target="+h+",readonly")
			continue
		}
		args = append(args, "--mount", "type=tmpfs,destination="+h+",readonly,tmpfs-mode=0555,tmpfs-size=4096")
	}
	args = append(args, o.Image)
	args = append(args, o.InitArgs...)
	// The policy on loki-init's threads too (the engine's libseccomp may
	// not know every name in the profile). Docker's network is always
	// a namespace of the container's own (its bridge, or none), which
	// keeps the host's abstract unix sockets out of reach by itself.
	return append(args, "-seccomp", ControlPath), nil
}

// checkSource refuses a bind source that resolves, through a symlink
// anywhere in it, to another path than the one given: dockerd follows
// links when it mounts, so an earlier peer that replaced a directory of
// a workspace with a link to /etc would have the next session write
// there. A source that does not exist is left to docker's own refusal.
// (A swap between this check and dockerd's mount is not closed here.)
func checkSource(src string) error {
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return nil
	}
	if clean := filepath.Clean(src); real != clean {
		return fmt.Errorf("%w: --bind source %s resolves to %s through a symlink, outside the path given: give the real path, or remove the link", ErrOptions, clean, real)
	}
	return nil
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
	var binds []mounts.Bind
	for _, s := range o.Binds {
		b, err := mounts.ParseBind(s)
		if err != nil {
			return nil, fmt.Errorf("%w: --bind %q: want SRC:DST[:ro|:rw], both paths absolute", ErrOptions, s)
		}
		binds = append(binds, b)
	}
	dests, err := mounts.ControlRootViews(root, binds, nil)
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

// Backend runs sessions through the Docker CLI. Options are the
// session's own (image, binds); the policy's part is added at Start.
type Backend struct {
	Options Options
	// Env is the peer environment's policy (--env, --no-default-env),
	// applied over the image's ENV by Prepare.
	Env peerenv.Policy
}

func (b *Backend) Name() string { return Name }

func (b *Backend) Start(req session.Request) (session.Process, error) {
	o := b.Options.withPolicy(req.Confine)
	o.ControlDir, o.ControlRoot, o.InitArgs = req.ControlDir, req.ControlRoot, req.InitArgs
	o.Sockets, o.TmpSize = req.Confine.Sockets, req.Confine.Resources.Tmp()
	var err error
	if o.HostSockets, err = sockdiag.Paths(); err != nil {
		return nil, confine.NoSocketList(Name, err)
	}
	if req.Scratch != "" && (o.CIDFile == "" || o.SeccompProfile == "") {
		if err := session.MakeScratch(req.Scratch); err != nil {
			return nil, err
		}
	}
	if req.Scratch != "" && o.CIDFile == "" {
		o.CIDFile = filepath.Join(req.Scratch, "docker.cid")
	}
	if req.Scratch != "" && o.SeccompProfile == "" {
		p, err := WriteSeccompProfile(req.Scratch)
		if err != nil {
			return nil, err
		}
		o.SeccompProfile = p
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
	p := &process{cmd: cmd, docker: path, name: o.Name, image: o.Image, cidFile: o.CIDFile,
		exited: make(chan struct{}), memoryMax: o.MemoryMax}
	// The engine enforces the pids limit and removes its cgroup, counters
	// and all, with the container: a cgroup of the session's own, with the
	// same limit, keeps the count of refused forks. Only where the daemon
	// is this host's (a local socket) and this user may make one; else
	// the limit stands unreported, as before.
	sock := localSocket()
	if r := req.Confine.Resources; o.PidsLimit > 0 && req.Scratch != "" && sock != "" {
		r.MemoryMax, r.CPU = 0, nil
		if cg, err := cgroup.ForSession(req.Scratch, r, nil); err == nil {
			if _, nested := cg.UnifiedPath(); nested {
				cg.Remove() // v2: not nested under docker yet
			} else {
				p.cg = cg
			}
		}
	}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		p.cg.Remove()
		return nil, fmt.Errorf("%w: %v: %s", ErrNotFound, err, FixHint)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if p.cg != nil {
		if err := p.adopt(sock); err != nil {
			p.startErr = fmt.Errorf("%w: the session's cgroup: %v", ErrNotStarted, err)
			p.Kill()
		}
	}
	return p, nil
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
	cmd                          *exec.Cmd
	docker, name, image, cidFile string
	started                      time.Time
	memoryMax                    int64          // --memory-max in bytes, 0 = none
	exited                       chan struct{}  // closed when "docker run" has been waited for
	waitErr                      error          // docker run's, once exited is closed
	cg                           *cgroup.Cgroup // nil: refused forks not counted here
	startErr                     error          // the session's cgroup could not take the container

	mu sync.Mutex
	// removed: docker run ended normally, so --rm has already removed the
	// container (the CLI waits for that) and Close has nothing to do.
	removed bool
	// unanswered: a kill found the daemon unresponsive; Close does not
	// wait on it again (the lease ends the container).
	unanswered bool
}

// run runs one bounded docker command and returns its stdout.
func (p *process) run(args ...string) ([]byte, error) {
	return cli(p.docker, args...)
}

func cli(docker string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, docker, args...)
	cmd.Env = dockerEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return out, fmt.Errorf("docker %s: no answer within %v", args[0], cliTimeout)
	}
	if err != nil {
		return out, fmt.Errorf("docker %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func (p *process) Wait() session.Exit {
	<-p.exited
	exit := p.wait()
	if p.startErr != nil {
		exit.Err = p.startErr
	}
	exit.Limit = errors.Join(exit.Limit, p.cg.Hit())
	return exit
}

func (p *process) wait() session.Exit {
	code, sig, ok := exitcode.Status(p.waitErr)
	switch {
	case !ok:
		return session.Exit{Code: -1, Err: p.waitErr}
	case sig > 0:
		return session.Exit{Signal: sig}
	case code == 0:
		p.setRemoved()
		return session.Exit{}
	default:
		return p.classify(code)
	}
}

func (p *process) setRemoved() {
	p.mu.Lock()
	p.removed = true
	p.mu.Unlock()
}

// classify tells the session's own nonzero code from docker's failures.
// Only nonzero codes pay for the extra docker calls, and most of them
// only when the code is one docker itself uses.
func (p *process) classify(code int) session.Exit {
	if code == runFailed && p.neverCreated() {
		// docker itself failed (its message is above): the session
		// never ran, which is 127, not a code of the session's.
		return session.Exit{Code: code, Err: fmt.Errorf("%w (docker run exited %d; its message is above): %s",
			ErrNotCreated, code, p.hint())}
	}
	// docker run returns only once --rm removed the container; one that
	// still exists means the CLI itself failed while the session ran.
	if _, err := p.run("container", "inspect", "--format", "{{.State.Status}}", p.name); err == nil {
		return session.Exit{Code: code, Escaped: fmt.Errorf("%w (docker run exited %d)", ErrOutputLost, code)}
	}
	// No container, and no daemon to ask: the engine stopped (or was
	// stopped) under the session and ended it; the code is not the
	// peer's, and nothing can be verified of what it left.
	if _, err := p.run("version", "--format", "{{.Server.Version}}"); err != nil {
		return session.Exit{Code: code, Escaped: fmt.Errorf("%w (docker run exited %d): %s", ErrEngineLost, code, DaemonFixHint)}
	}
	p.setRemoved()
	events := p.events()
	if code == runFailed && !events["start"] {
		return session.Exit{Code: code, Err: fmt.Errorf("%w (docker run exited %d; its message is above): %s",
			ErrNotStarted, code, RefusedFixHint)}
	}
	// The container's OOM killer ran: the session hit --memory-max,
	// whichever process of it was killed (the peer: loki-init's 125; the
	// init itself: 137). The engine's cgroup is gone with --rm, so its
	// event log is the witness.
	var limit error
	if p.memoryMax > 0 && events["oom"] {
		limit = fmt.Errorf("%w: session exceeded --memory-max %s: the kernel's OOM killer killed in the container", confine.ErrMemoryLimit, confine.FormatBytes(p.memoryMax))
	}
	// loki-init itself killed (docker kill, docker stop past its timeout,
	// the OOM killer): the engine reports 128+N like a peer's own code
	// would; its event log tells them apart.
	if n := code - 128; n > 0 && n < 65 && (events["kill:"+strconv.Itoa(n)] || n == int(syscall.SIGKILL) && events["oom"]) {
		return session.Exit{Signal: n, Limit: limit}
	}
	return session.Exit{Code: code, Limit: limit}
}

// events returns the container's event actions since Start ("start",
// "oom", "kill:N" for a kill with signal N). Empty when unreadable.
func (p *process) events() map[string]bool {
	since := strconv.FormatFloat(float64(p.started.Add(-time.Second).UnixNano())/1e9, 'f', 3, 64)
	until := strconv.FormatFloat(float64(time.Now().UnixNano())/1e9, 'f', 3, 64)
	out, _ := p.run("events", "--since", since, "--until", until, "--filter", "container="+p.name,
		"--format", "{{.Action}} {{index .Actor.Attributes \"signal\"}}")
	seen := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		action, sig, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch {
		case action == "kill" && sig != "":
			seen["kill:"+sig] = true
		case action != "":
			seen[action] = true
		}
	}
	return seen
}

// hint names the fix for a container docker never created: no daemon,
// no such image, or something else docker said above.
func (p *process) hint() string {
	return Diagnose(p.docker, p.image)
}

// Diagnose names the likely fix when docker could not create a container
// of image: the daemon does not answer, the image is missing, or docker's
// own message (printed above) says it.
func Diagnose(docker, image string) string {
	if _, err := cli(docker, "version", "--format", "{{.Server.Version}}"); err != nil {
		return ErrNoDaemon.Error() + ": " + DaemonFixHint
	}
	if _, err := cli(docker, "image", "inspect", "--format", "{{.Id}}", image); err != nil {
		return fmt.Sprintf("%v: %s is not available locally and was not pulled: %s", ErrNoImage, image, ImageFixHint)
	}
	return RefusedFixHint
}

// neverCreated: no cid file, so docker never created the container.
func (p *process) neverCreated() bool {
	if p.cidFile == "" {
		return false // unknown: pass the code on as it is
	}
	_, err := os.Stat(p.cidFile)
	return errors.Is(err, os.ErrNotExist)
}

// Signal asks the engine to deliver sig to loki-init, in the background:
// a daemon that does not answer must not hold the caller's signal loop
// (its stop timeout and a second signal still act). A signal that comes
// before the container runs is delivered once it does.
func (p *process) Signal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("unsupported signal %v", sig)
	}
	go p.deliver(s)
	return nil
}

// deliver retries docker kill until it succeeds or docker run has ended:
// before the container runs, the engine refuses the kill.
func (p *process) deliver(s syscall.Signal) {
	for {
		if _, err := p.run("kill", "--signal", strconv.Itoa(int(s)), p.name); err == nil {
			return
		}
		select {
		case <-p.exited:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Kill ends the session now: docker kill, and when docker run has not
// ended killWait later (a daemon that does not answer), the docker CLI
// itself is killed, which ends the session here; the lease, no longer
// renewed, then ends the container. Never blocks the caller.
func (p *process) Kill() error {
	go p.run("kill", p.name)
	go func() {
		select {
		case <-p.exited:
		case <-time.After(killWait):
			p.mu.Lock()
			p.unanswered = true
			p.mu.Unlock()
			p.cmd.Process.Kill()
		}
	}()
	return nil
}

// Close removes the container unless --rm already did (docker run ended
// normally); bounded, like every other call.
func (p *process) Close() error {
	p.mu.Lock()
	skip := p.removed || p.unanswered
	p.mu.Unlock()
	var err error
	if !skip {
		_, err = p.run("rm", "-f", p.name)
	}
	if cerr := p.cg.Remove(); err == nil {
		err = cerr
	}
	return err
}
