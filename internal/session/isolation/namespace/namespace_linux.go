//go:build linux

package namespace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/landlock"
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/cgroup"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/egress"
)

// statusFD is the stage's end of the status pipe (ExtraFiles[0]).
const statusFD = 3

// hostStdinFD is the client's own stdin in the stage and in loki-init
// (ExtraFiles[1]) when the session passes it (Request.HostStdin).
const hostStdinFD = 4

// DirectStdinFD is where loki-init finds Request.HostStdin.
func (b *Backend) DirectStdinFD() int { return hostStdinFD }

// maxStatus bounds what the supervisor reads from the status pipe.
const maxStatus = 4096

// Start clones the stage into new namespaces and waits until it has either
// exec'd loki-init or reported why it could not.
func (b *Backend) Start(req session.Request) (session.Process, error) {
	self := b.Self
	if self == "" {
		self = "/proc/self/exe"
	}
	if err := b.check(req.Confine, req.ControlRoot); err != nil {
		return nil, err
	}
	stage := stagePolicy{Policy: req.Confine, TTY: req.TTY, HostStdin: req.HostStdin != nil}
	if exe := req.Peer.Argv[0]; stage.FS != confine.FSHost && filepath.IsAbs(exe) && under(filepath.Clean(exe), "/tmp") {
		// The agent's own executable stays reachable under the private
		// /tmp, read-only.
		stage.Read = append(stage.Read, filepath.Clean(exe))
	}
	if stage.FS != confine.FSHost && req.Peer.Cwd != "" && req.Peer.Cwd != "/" && !underAnyPath(req.Peer.Cwd, stage.Write) {
		// The cwd is the workspace: writable, unless it is / (then
		// only what --write names is).
		stage.Write = append([]string{req.Peer.Cwd}, stage.Write...)
	}
	private := b.privateUserNS(req.Confine)
	var trees []idmapTree
	var treesR, treesW *os.File
	var err error
	if private {
		stage.PrivateUser = true
		if stage.FS != confine.FSHost {
			trees = idmapTrees(stage.Write, req.Peer.Env["HOME"])
			if err := checkReachable(trees); err != nil {
				return nil, err
			}
		}
		if len(trees) > 0 {
			if treesR, treesW, err = socketPair(); err != nil {
				return nil, fmt.Errorf("%w: idmapped mounts: %v", ErrNamespace, err)
			}
			defer treesR.Close()
			defer treesW.Close()
		}
	}
	var rules egress.Rules
	var proxyR, proxyW *os.File
	if len(req.Confine.Allow) > 0 {
		if rules, err = egress.Parse(req.Confine.Allow); err != nil {
			return nil, err
		}
		if proxyR, proxyW, err = socketPair(); err != nil {
			return nil, fmt.Errorf("%w: egress proxy: %v", ErrNamespace, err)
		}
		defer proxyR.Close()
		defer proxyW.Close()
	}
	extra := extraFiles(nil, req.HostStdin) // [0] is the status pipe, made below
	if proxyW != nil {
		stage.EgressFD = statusFD + len(extra)
		extra = append(extra, proxyW)
	}
	if treesW != nil {
		stage.IDMap, stage.IDMapFD = trees, statusFD+len(extra)
		extra = append(extra, treesW)
	}
	policy, err := json.Marshal(stage)
	if err != nil {
		return nil, err
	}
	cg, err := b.sessionCgroup(req)
	if err != nil {
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		cg.Remove()
		return nil, err
	}
	defer statusR.Close()
	extra[0] = statusW
	cmd := &exec.Cmd{
		Path: self,
		Args: append([]string{"loki-supervise", StageCommand}, stageArgs(req.ControlDir, b.Init, req.InitArgs)...),
		// The stage reads its policy from the environment; loki-init gets
		// none: secrets travel only in the prelude.
		Env:         []string{policyEnv + "=" + string(policy)},
		Dir:         "/",
		Stdin:       req.Stdin,
		Stdout:      req.Stdout,
		Stderr:      req.Stderr,
		ExtraFiles:  extra,
		SysProcAttr: b.sysProcAttr(req.Confine, private),
	}
	err = cmd.Start()
	statusW.Close()
	if err != nil {
		cg.Remove()
		return nil, fmt.Errorf("%w: %v; %s", ErrNamespace, err, FixHint)
	}
	// Into the cgroup before the prelude is written: nothing of the
	// session has forked yet (the init waits for the prelude).
	if err := cg.Add(cmd.Process.Pid); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		cg.Remove()
		return nil, err
	}
	p := &process{cmd: cmd, cg: cg}
	var handoff error
	if treesW != nil {
		treesW.Close()
		// The stage waits for every mount before it mounts anything; on
		// failure it reads EOF and says so on the status pipe.
		if err := sendTrees(treesR, cmd.Process.Pid, trees); err != nil {
			cmd.Process.Kill()
			handoff = confine.Refuse(Name, "a private user namespace here ("+err.Error()+")", "use --userns host, or a filesystem with idmapped mounts (Linux 5.12 or later)")
		}
		treesR.Close()
	}
	if proxyW != nil && handoff == nil {
		proxyW.Close()
		// The stage sends the listener before it execs loki-init, or
		// fails (its reason then comes on the status pipe).
		ln, err := egress.ReceiveListener(proxyR)
		if err == nil {
			p.egress = egress.Serve(ln, rules, req.Notes)
		}
		handoff = err
	}
	msg, _ := io.ReadAll(io.LimitReader(statusR, maxStatus))
	switch {
	case len(msg) > 0:
		p.startErr = fmt.Errorf("%w: %s", ErrStage, strings.TrimSpace(string(msg)))
	case handoff != nil && errors.Is(handoff, confine.ErrUnsupported):
		p.startErr = handoff
	case handoff != nil:
		cmd.Process.Kill()
		p.startErr = fmt.Errorf("%w: %v", ErrStage, handoff)
	}
	return p, nil
}

// policyEnv carries the confinement policy (JSON) to the stage.
const policyEnv = "LOKI_STAGE_CONFINE"

// stagePolicy is the policy as the stage applies it: the cwd added to
// Write, and Read: paths under /tmp shown read-only in the private one
// (the agent's executable).
type stagePolicy struct {
	confine.Policy
	Read []string `json:"read,omitempty"`
	// TTY: the peer gets a terminal, so /dev/pts must be the session's
	// own devpts (the confined /dev has one; the host's /dev does not).
	TTY bool `json:"tty,omitempty"`
	// HostStdin: hostStdinFD is the client's stdin, kept for loki-init.
	HostStdin bool `json:"host_stdin,omitempty"`
	// EgressFD > 0: the unix socket the egress proxy's listener is sent
	// back over, once made in the session's network namespace.
	EgressFD int `json:"egress_fd,omitempty"`
	// PrivateUser: the stage runs in a user namespace of the private
	// block (idmap_linux.go), as the host's uid 0 until it becomes root
	// of it; IDMap are the trees it receives on IDMapFD.
	PrivateUser bool        `json:"private_user,omitempty"`
	IDMap       []idmapTree `json:"idmap,omitempty"`
	IDMapFD     int         `json:"idmap_fd,omitempty"`
}

// check refuses what this backend cannot give: without root, the user
// namespace maps one uid (the caller's), so no other --user exists in it.
func (b *Backend) check(p confine.Policy, controlRoot string) error {
	if p.UserNS == confine.UserNSHost && os.Geteuid() != 0 {
		return confine.Refuse(Name, "--userns host without root", "run loki-supervise as root, or drop --userns (without root the agent always gets a user namespace)")
	}
	u, what := p.User, ""
	if u != nil {
		what = "--user " + u.String()
	} else if b.privateUserNS(p) {
		r := confine.PrivateRange()
		u, what = &confine.User{UID: r.UID, GID: r.GID}, "a private user namespace (host ids "+strconv.FormatUint(uint64(r.UID), 10)+"+)"
	} else {
		return nil
	}
	if os.Geteuid() != 0 && (int(u.UID) != os.Geteuid() || int(u.GID) != os.Getegid()) {
		return confine.Refuse(Name, what+" without root", "run loki-supervise as root, or drop --user (the peer already runs as you)")
	}
	// The init reaches its control dir through the control root's
	// parents (the root itself is masked by a searchable tmpfs; under a
	// private /tmp, the stage makes them anew, searchable).
	for d := filepath.Dir(controlRoot); ; d = filepath.Dir(d) {
		if p.FS != confine.FSHost && under(d, "/tmp") {
			continue
		}
		var st unix.Stat_t
		if err := unix.Stat(d, &st); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrNamespace, d, err)
		}
		if !searchable(st, *u) {
			return confine.Refuse(Name, what+" with --control-root "+controlRoot,
				d+" is not searchable by that user: pick a control root under world-searchable dirs (the default /run/loki is)")
		}
		if d == "/" {
			return nil
		}
	}
}

func searchable(st unix.Stat_t, u confine.User) bool {
	switch {
	case st.Uid == u.UID:
		return st.Mode&0o100 != 0
	case st.Gid == u.GID:
		return st.Mode&0o010 != 0
	}
	return st.Mode&0o001 != 0
}

// extraFiles are the stage's fds from 3 on: the status pipe, then the
// client's stdin when it is passed.
func extraFiles(status, hostStdin *os.File) []*os.File {
	if hostStdin == nil {
		return []*os.File{status}
	}
	return []*os.File{status, hostStdin}
}

func (b *Backend) sysProcAttr(p confine.Policy, private bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{
		// IPC of its own: a uid-0 peer owns root's SysV shared memory,
		// semaphores and message queues (a database's buffers) otherwise.
		Cloneflags: unix.CLONE_NEWPID | unix.CLONE_NEWNS | unix.CLONE_NEWIPC,
		// Its own process group: a terminal's ^C reaches the supervisor,
		// which forwards it once, instead of every process at once.
		Setpgid: true,
	}
	if !b.NoParentDeathSignal {
		attr.Pdeathsig = syscall.SIGKILL
	}
	if p.Net().Private() {
		attr.Cloneflags |= unix.CLONE_NEWNET
	}
	if uid, gid := os.Geteuid(), os.Getegid(); uid != 0 {
		attr.Cloneflags |= unix.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		// A non-root uid loses its capabilities at exec; keep the two the
		// stage needs (mounts, dropping the bounding set) as ambient ones.
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP, unix.CAP_NET_ADMIN}
	}
	if private {
		r := confine.PrivateRange()
		attr.Cloneflags |= unix.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: int(r.UID), Size: int(r.Size)}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: int(r.GID), Size: int(r.Size)}}
		attr.GidMappingsEnableSetgroups = true
		// The stage keeps the host's uid 0 (unmapped: nobody inside) while
		// it resolves host paths, with its capabilities in the new
		// namespace as ambient ones, then becomes root of the namespace
		// (idmap_linux.go). The host's groups go now.
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP, unix.CAP_NET_ADMIN, unix.CAP_SETUID, unix.CAP_SETGID}
	}
	return attr
}

type process struct {
	cmd      *exec.Cmd
	startErr error
	cg       *cgroup.Cgroup // nil: no limits
	egress   *egress.Proxy  // nil: no --allow-host
}

func (p *process) Wait() session.Exit {
	err := p.cmd.Wait()
	exit := session.Exit{Err: p.startErr}
	code, sig, ok := exitcode.Status(err)
	switch {
	case !ok:
		exit.Code, exit.Err = -1, err
	case sig > 0:
		exit.Signal = sig
	default:
		exit.Code = code
	}
	exit.Limit = p.cg.Hit()
	return exit
}

// Signal and Kill go through os.Process, which holds the child unreaped
// (and uses a pidfd where available), so the pid cannot name another
// process. SIGKILL of PID 1 ends every process of the namespace.
func (p *process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }
func (p *process) Kill() error                { return p.cmd.Process.Kill() }
func (p *process) Close() error {
	p.egress.Close()
	return p.cg.Remove()
}

// RunStage is the body of StageCommand. It returns only on failure, after
// writing the reason to the status pipe; on success it has become loki-init.
// It must run on the thread the kernel created the process with (main keeps
// its goroutine there): the parent-death signal belongs to that thread and
// would be lost by an exec from any other.
func RunStage(args []string) error {
	status := os.NewFile(statusFD, "status")
	fail := func(step string, err error) error {
		if status != nil {
			fmt.Fprintf(status, "%s: %v", step, err)
		}
		return exitcode.NotLaunched(nil)
	}
	if _, err := unix.FcntlInt(statusFD, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return fail("status pipe", err)
	}
	control, argv, err := parseStageArgs(args)
	if err != nil {
		return fail("arguments", err)
	}
	var policy stagePolicy
	if err := json.Unmarshal([]byte(os.Getenv(policyEnv)), &policy); err != nil {
		return fail("arguments", fmt.Errorf("%w: confinement policy: %v", ErrStage, err))
	}
	if os.Getpid() != 1 {
		return fail("pid namespace", errors.New("stage is not PID 1"))
	}
	var trees map[string]int
	if len(policy.IDMap) > 0 {
		trees, err = receiveTrees(policy.IDMapFD, policy.IDMap)
		if err != nil {
			return fail("mounts", err)
		}
		unix.Close(policy.IDMapFD)
	}
	fs := &fsPlan{hide: policy.Hide, host: true}
	if policy.FS != confine.FSHost {
		fs = &fsPlan{write: policy.Write, read: policy.Read, hide: policy.Hide, trees: trees}
		for _, t := range policy.IDMap {
			fs.treeOrder = append(fs.treeOrder, t.Path)
		}
		if under(filepath.Clean(argv[0]), "/tmp") {
			// loki-init itself stays reachable at its path (exec'd by
			// it: its comm stays loki-init), read-only.
			fs.read = append(fs.read, filepath.Clean(argv[0]))
		}
	}
	if policy.PrivateUser {
		fs.become = becomeRoot
	}
	if err := isolateMounts(control, fs); err != nil {
		return fail("mounts", err)
	}
	if policy.TTY && fs.host {
		if err := privatePTS(); err != nil {
			return fail("mounts", err)
		}
	}
	if policy.Net() == confine.NetworkLoopback {
		if err := loopbackUp(); err != nil {
			return fail("network", err)
		}
	}
	if policy.EgressFD > 0 {
		if err := egress.SendListener(policy.EgressFD); err != nil {
			return fail("network", err)
		}
		unix.Close(policy.EgressFD)
	}
	if err := dropPrivileges(); err != nil {
		return fail("capabilities", err)
	}
	if err := switchUser(policy.User); err != nil {
		return fail("user", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail("capabilities", fmt.Errorf("set no_new_privs: %w", err))
	}
	if err := denyKeyrings(); err != nil {
		return fail("seccomp", err)
	}
	if policy.FS != confine.FSHost && !policy.Net().Private() {
		// A confined peer on the host's network: the host's abstract
		// unix sockets are out of its reach where Landlock can say so.
		if err := landlock.ScopeAbstractUnix(); err != nil && !errors.Is(err, landlock.ErrUnavailable) {
			return fail("landlock", err)
		}
	}
	// Descriptors the supervisor inherited from its own caller must not
	// reach the namespace: only stdio crosses the exec.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fail("close descriptors", err)
	}
	if policy.HostStdin {
		// The client's own stdin, which loki-init hands to the peer.
		if _, err := unix.FcntlInt(hostStdinFD, unix.F_SETFD, 0); err != nil {
			return fail("host stdin", err)
		}
	}
	err = unix.Exec(argv[0], argv, []string{})
	return fail("exec "+argv[0], err)
}

// isolateMounts: nothing mounted here propagates to the host; /proc shows
// this namespace's processes; the control root (which holds every
// session's dir) is covered by an empty tmpfs, so the peer cannot see, let
// alone renew, another session's lease; its own control dir reappears at
// the same path, read-only (and nosuid, nodev, noexec).
func isolateMounts(control string, fs *fsPlan) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	// Held from here on: a private /tmp may cover its path.
	controlFD, err := unix.Open(control, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open control dir: %w", err)
	}
	defer unix.Close(controlFD)
	if fs != nil {
		if err := fs.apply(); err != nil {
			return err
		}
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if err := protectKernel(); err != nil {
		return err
	}
	if err := maskControlRoot(control, controlFD); err != nil {
		return err
	}
	ro := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	if err := unix.Mount("", control, "", ro, ""); err != nil {
		return fmt.Errorf("remount control dir read-only: %w", err)
	}
	return nil
}

// maskControlRoot covers ROOT of ROOT/session-X/control with a fresh
// tmpfs and binds the session's own control dir back at its path. The
// tmpfs and the dirs on the way are 0711: a --user init must traverse them
// to reach its control dir, and nobody can list them. The dir
// is held open across the mount, since its path is hidden by it. The
// tmpfs is made read-only once the path exists; the peer has no
// capabilities left to unmount either.
func maskControlRoot(control string, fd int) error {
	root := filepath.Dir(filepath.Dir(control))
	rel, err := filepath.Rel(root, control)
	if err != nil || root == "/" || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("control dir %s is not ROOT/SESSION/control", control)
	}
	// Under a private /tmp the root's path is gone: make it there.
	if err := mkdirAllMode(root, 0o711); err != nil {
		return fmt.Errorf("control root mount point: %w", err)
	}
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if err := unix.Mount("tmpfs", root, "tmpfs", flags, "mode=0711,size=64k"); err != nil {
		return fmt.Errorf("mask control root: %w", err)
	}
	if err := mkdirAllMode(control, 0o711); err != nil {
		return fmt.Errorf("recreate control path: %w", err)
	}
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fd), control, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind control dir: %w", err)
	}
	if err := unix.Mount("", root, "", unix.MS_REMOUNT|unix.MS_RDONLY|flags, ""); err != nil {
		return fmt.Errorf("make control root mask read-only: %w", err)
	}
	return nil
}

// privatePTS mounts a devpts instance of the session's own at /dev/pts
// over the host's (the confined /dev has one already): /dev/ptmx then
// allocates the peer's terminal in it (the kernel resolves ptmx to the
// devpts mounted at "pts" beside it), the peer sees no host terminal
// there, and the host's /dev/pts lists nothing of the session.
func privatePTS() error {
	const flags = unix.MS_NOSUID | unix.MS_NOEXEC
	if err := unix.Mount("devpts", "/dev/pts", "devpts", flags, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mount a private /dev/pts: %w", err)
	}
	return nil
}

// dropPrivileges empties the bounding, inheritable and ambient sets on
// this (the exec'ing) thread; with no_new_privs, set after switchUser,
// neither loki-init nor anything it starts can hold or regain a
// capability.
func dropPrivileges() error {
	last := lastCap()
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	// Root keeps the inheritable set across exec whatever the bounding set
	// says, so it must be emptied too.
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("read capabilities: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear inheritable capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	return nil
}

// switchUser makes this thread (the one that execs loki-init) run as
// --user, with that gid as its only group. The bounding set is already
// empty, so the uid change also leaves no capability to regain. A user
// that is the caller itself (the user-namespace case) needs no change.
func switchUser(u *confine.User) error {
	if u == nil || (int(u.UID) == os.Getuid() && int(u.GID) == os.Getgid()) {
		return nil
	}
	return setIDs(u.UID, u.GID)
}

// setIDs sets this thread's uids to uid and its gids to gid, with gid as
// its only group. Raw syscalls on this thread only: the Go wrappers
// change every thread of the process, and only this one execs.
func setIDs(uid, gid uint32) error {
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 1, uintptr(unsafe.Pointer(&gid)), 0); e != 0 {
		return fmt.Errorf("setgroups %d: %w", gid, e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(gid), uintptr(gid), uintptr(gid)); e != 0 {
		return fmt.Errorf("setgid %d: %w", gid, e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)); e != 0 {
		return fmt.Errorf("setuid %d: %w", uid, e)
	}
	return nil
}

// loopbackUp brings lo of the new network namespace up (it starts down).
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("read lo flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	return nil
}

// mkdirAllMode is os.MkdirAll with mode applied despite the umask.
func mkdirAllMode(path string, mode os.FileMode) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil
	}
	if err := mkdirAllMode(filepath.Dir(path), mode); err != nil {
		return err
	}
	if err := os.Mkdir(path, mode); err != nil && !os.IsExist(err) {
		return err
	}
	return os.Chmod(path, mode)
}

func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err == nil {
		var n int
		if _, err := fmt.Sscanf(strings.TrimSpace(string(b)), "%d", &n); err == nil && n > 0 && n < 128 {
			return n
		}
	}
	return 63
}

// EgressProxy: the stage makes the proxy's listener in the session's
// network namespace and hands it to the supervisor (--allow-host).
func (b *Backend) EgressProxy() bool { return true }

// socketPair is a connected pair of unix datagram sockets, close-on-exec
// (the stage's end is inherited as an extra file, which clears it).
func socketPair() (*os.File, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "egress-r"), os.NewFile(uintptr(fds[1]), "egress-w"), nil
}
