//go:build linux

package namespace

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/proc/sockowner"
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/cgroup"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/egress"
	"github.com/loki-sh/loki/internal/session/isolation/mounts"
	"github.com/loki-sh/loki/internal/session/isolation/namespace/stage"
	"github.com/loki-sh/loki/internal/session/isolation/sockdiag"
	"github.com/loki-sh/loki/internal/session/seccomp"
	"github.com/loki-sh/loki/internal/session/seccomp/notify"
	"github.com/loki-sh/loki/internal/session/status"
)

// maxStatus bounds what the supervisor reads from the status pipe.
const maxStatus = 4096

// maxEgressLookups bounds how many egress refusals get their client
// named (each reads /proc once).
const maxEgressLookups = 64

// Start clones the stage into new namespaces and waits until it has either
// confined the process and become loki-init or reported why it could not.
func (b *Backend) Start(req session.Request) (session.Process, error) {
	privateDirs := confine.PrivateHostDirs()
	if err := b.check(req.Confine, req.ControlRoot, privateDirs); err != nil {
		return nil, err
	}
	// The other sessions' roots are read from every host process: while
	// the trees and the cgroup are made and the stage starts, which
	// receives them on a pipe (Policy.LateFD) before it mounts anything.
	otherRoots := make(chan []string, 1)
	go func() { otherRoots <- session.OtherControlRoots(req.ControlRoot) }()
	pol := stage.Policy{Policy: req.Confine, TTY: req.TTY, HostStdin: req.HostStdin != nil}
	if exe := req.Peer.Argv[0]; pol.FS != confine.FSHost && filepath.IsAbs(exe) && mounts.UnderAny(filepath.Clean(exe), privateDirs) {
		// The agent's own executable stays reachable under the private
		// /tmp (or /run), read-only.
		pol.Read = append(pol.Read, filepath.Clean(exe))
	}
	if pol.FS != confine.FSHost && req.Peer.Cwd != "" && req.Peer.Cwd != "/" && !mounts.UnderAny(req.Peer.Cwd, pol.Write) {
		// The cwd is the workspace: writable, unless it is / (then
		// only what --write names is).
		pol.Write = append([]string{req.Peer.Cwd}, pol.Write...)
	}
	// The host's sockets too, on the same pipe.
	type sockets struct {
		mask []string
		err  error
	}
	hostMask := make(chan sockets, 1)
	go func(p confine.Policy, write []string) {
		var s sockets
		if p.FS != confine.FSHost {
			s.mask, s.err = hostSockets(p, write, privateDirs)
		}
		hostMask <- s
	}(pol.Policy, slices.Clone(pol.Write))
	private := b.privateUserNS(req.Confine)
	if home := homeDir(req.Peer.Env["HOME"]); pol.FS != confine.FSHost && !private && mounts.UnderAny(home, privateDirs) {
		// HOME under /tmp (CI's) stays visible in the private /tmp,
		// read-only (as root in a private user namespace it is an
		// idmapped tree instead).
		pol.Read = append(pol.Read, home)
	}
	var trees []stage.IDMapTree
	var treesR, treesW *os.File
	var err error
	if private {
		pol.PrivateUser = true
		if pol.FS != confine.FSHost {
			anew := anewDirs(privateDirs)
			trees = idmapTrees(pol.Write, req.Peer.Env["HOME"], anew)
			if err := checkReachable(trees, anew); err != nil {
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
	var notifyR, notifyW *os.File
	if req.Status.Streams() {
		// The policy's denials reported: only for a stream, which alone
		// shows them; otherwise the filter answers by itself, as ever.
		if notifyR, notifyW, err = socketPair(); err != nil {
			return nil, fmt.Errorf("%w: seccomp listener: %v", ErrNamespace, err)
		}
		defer notifyR.Close()
		defer notifyW.Close()
	}
	extra := extraFiles(nil, req.HostStdin) // [0] is the status pipe, made below
	if notifyW != nil {
		pol.NotifyFD = stage.StatusFD + len(extra)
		extra = append(extra, notifyW)
	}
	if proxyW != nil {
		pol.EgressFD = stage.StatusFD + len(extra)
		extra = append(extra, proxyW)
	}
	if treesW != nil {
		pol.IDMap, pol.IDMapFD = trees, stage.StatusFD+len(extra)
		extra = append(extra, treesW)
	}
	lateR, lateW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer lateR.Close()
	defer lateW.Close()
	pol.LateFD = stage.StatusFD + len(extra)
	extra = append(extra, lateR)
	cg, err := b.sessionCgroup(req)
	if err != nil {
		return nil, err
	}
	if cg != nil {
		name, v1 := cg.Placement()
		pol.Cgroup = &stage.Cgroup{Name: name, V1: v1}
	}
	policy := pol.Encode()
	// The peer is born in a pids cgroup of its own (v1), so the init is
	// outside the limit a fork bomb fills.
	peerTasks, err := cg.OpenPeerTasks()
	if err != nil {
		cg.Remove()
		return nil, err
	}
	if err := req.Confine.Resources.CheckShared(Name); peerTasks == nil && cg != nil && err != nil {
		cg.Remove()
		return nil, err
	}
	initArgs := req.InitArgs
	if peerTasks != nil {
		defer peerTasks.Close()
		initArgs = append(slices.Clip(initArgs), "-peer-cgroup-fd", strconv.Itoa(stage.StatusFD+len(extra)))
		extra = append(extra, peerTasks)
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		cg.Remove()
		return nil, err
	}
	defer statusR.Close()
	extra[0] = statusW
	cmd := &exec.Cmd{
		Path: b.Init,
		Args: append([]string{"loki-init", stage.Command}, stage.Args(req.ControlDir, b.Init, initArgs)...),
		// The stage reads its policy from the environment; loki-init gets
		// none: secrets travel only in the prelude.
		Env:         []string{stage.PolicyEnv + "=" + policy, stage.RuntimeEnv},
		Dir:         "/",
		Stdin:       req.Stdin,
		Stdout:      req.Stdout,
		Stderr:      req.Stderr,
		ExtraFiles:  extra,
		SysProcAttr: b.sysProcAttr(req.Confine, private),
	}
	// Born in the session's cgroup: the stage never runs outside its
	// limits and is never migrated (the stage checks, Policy.Cgroup).
	err = cg.Start(cmd)
	statusW.Close()
	lateR.Close()
	if err != nil {
		cg.Remove()
		if errors.Is(err, cgroup.ErrUnavailable) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v; %s", ErrNamespace, err, FixHint)
	}
	p := &process{cmd: cmd, cg: cg}
	// Written whole before the trees are sent (the stage reads them in
	// that order); a stage that is gone reports on the status pipe.
	// Without the list of the host's sockets the session would not know
	// what it leaves reachable: it refuses.
	s := <-hostMask
	if s.err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		cg.Remove()
		return nil, s.err
	}
	lateW.Write(stage.Late{Mask: s.mask, OtherRoots: <-otherRoots}.Encode())
	lateW.Close()
	var handoff error
	if treesW != nil {
		treesW.Close()
		// The stage waits for every mount before it mounts anything; on
		// failure it reads EOF and says so on the status pipe.
		// A stage that is gone is reported as any other: by its
		// status, or by the session when nothing came.
		if err := sendTrees(treesR, cmd.Process.Pid, trees); err != nil && !errors.Is(err, errStageGone) {
			cmd.Process.Kill()
			handoff = confine.Refuse(Name, "a private user namespace here ("+err.Error()+")", "use --userns host, or a filesystem with idmapped mounts (Linux 5.12 or later)")
		}
		treesR.Close()
	}
	if proxyW != nil && handoff == nil {
		proxyW.Close()
		// The stage sends the listener before it becomes loki-init, or
		// fails (its reason then comes on the status pipe).
		ln, err := egress.ReceiveListener(proxyR)
		if err == nil {
			anchor := cmd.Process.Pid
			var lookups atomic.Int32
			p.egress = egress.Serve(ln, rules, req.Notes, func(target string, client netip.AddrPort) {
				r := status.Refusal{What: status.Egress, Host: target}
				// Naming the client reads /proc: only for the first
				// refusals, so a flood of them costs nothing more.
				if lookups.Add(1) <= maxEgressLookups {
					r.PID, r.Comm, _ = sockowner.Find(anchor, client)
				}
				req.Status.Refused(r)
			})
		}
		handoff = err
	}
	if notifyW != nil && handoff == nil {
		notifyW.Close()
		// Sent once the filter is on, before the stage becomes loki-init.
		fd, why, err := seccomp.ReceiveListener(int(notifyR.Fd()))
		switch {
		case err != nil:
			handoff = err
		case fd >= 0:
			p.notifier = notify.Serve(fd, func(r notify.Refusal) {
				req.Status.Refused(status.Refusal{What: status.Syscall, Syscall: r.Syscall, PID: r.PID, Comm: r.Comm})
			})
		default:
			p.unobserved = map[status.Kind]string{status.Syscall: why}
		}
	}
	msg, _ := io.ReadAll(io.LimitReader(statusR, maxStatus))
	switch {
	case len(msg) > 0:
		m := strings.TrimSpace(string(msg))
		if strings.HasPrefix(m, stage.PolicyRefused) && !strings.Contains(m, stage.FormatHint) {
			// A stage of an older build, which read the policy as JSON.
			m += " (" + stage.FormatHint + ")"
		}
		p.startErr = fmt.Errorf("%w: %s", ErrStage, m)
	case handoff != nil && errors.Is(handoff, confine.ErrUnsupported):
		p.startErr = handoff
	case handoff != nil:
		cmd.Process.Kill()
		p.startErr = fmt.Errorf("%w: %v", ErrStage, handoff)
	}
	return p, nil
}

// check refuses what depends on the host and the ids named (Admit has
// checked the knobs): without root, the user namespace maps one uid (the
// caller's), so no other --user exists in it; and the init's user must
// reach the control dir. privateDirs are confine.PrivateHostDirs.
func (b *Backend) check(p confine.Policy, controlRoot string, privateDirs []string) error {
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
	// private /tmp or /run, the stage makes them anew, searchable).
	for d := filepath.Dir(controlRoot); ; d = filepath.Dir(d) {
		if p.FS != confine.FSHost && mounts.UnderAny(d, privateDirs) {
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
		// A non-root uid loses its capabilities at exec; keep those the
		// stage needs (mounts, loopback, its monitor's timer slack) as
		// ambient ones.
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SYS_NICE}
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
		// DAC_READ_SEARCH: once HOME is attached idmapped, its 0700 dirs
		// are the namespace root's, not the host uid 0's, and the stage
		// still resolves the cwd and --write paths below them.
		// SYS_NICE: its runtime's monitor thread gets a coarser timer
		// slack (package sysmon), over a thread of its own namespace.
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETUID, unix.CAP_SETGID, unix.CAP_DAC_READ_SEARCH, unix.CAP_SYS_NICE}
	}
	return attr
}

type process struct {
	cmd      *exec.Cmd
	startErr error
	cg       *cgroup.Cgroup // nil: no limits
	egress   *egress.Proxy  // nil: no --allow-host
	notifier *notify.Notifier
	// unobserved: kinds the backend declares but this session cannot
	// report, and why.
	unobserved map[status.Kind]string
}

// Unobserved are the kinds Capabilities declares that this session
// does not report, and why.
func (p *process) Unobserved() map[status.Kind]string { return p.unobserved }

func (p *process) Wait() session.Exit {
	session.AwaitExit(p.cmd.Process)
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

// InitPID is loki-init's pid as the host sees it.
func (p *process) InitPID() int { return p.cmd.Process.Pid }
func (p *process) Kill() error  { return p.cmd.Process.Kill() }
func (p *process) Close() error {
	p.egress.Close()
	p.notifier.Close()
	return p.cg.Remove()
}

// socketPair is a connected pair of unix datagram sockets, close-on-exec
// (the stage's end is inherited as an extra file, which clears it).
func socketPair() (*os.File, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "egress-r"), os.NewFile(uintptr(fds[1]), "egress-w"), nil
}

// hostSockets lists the host's unix sockets the stage must cover: every
// one bound at the start (sock_diag) but those in private dirs (gone
// with them), in writable paths (the peer could bind its own there) and
// those --socket names. Without the list the session would not know
// what it leaves reachable, so it refuses.
func hostSockets(p confine.Policy, write, private []string) ([]string, error) {
	all, err := sockdiag.Paths()
	if err != nil {
		return nil, confine.NoSocketList(Name, err)
	}
	var out []string
	for _, s := range all {
		if mounts.UnderAny(s, private) || mounts.UnderAny(s, write) || slices.Contains(p.Sockets, s) {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}
