package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/cmd/internal/sessionflags"
	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/isolation/docker"
	"github.com/loki-sh/loki/internal/session/isolation/mounts"
	"github.com/loki-sh/loki/internal/session/isolation/namespace"
	"github.com/loki-sh/loki/internal/session/isolation/none"
	"github.com/loki-sh/loki/internal/session/isolation/oci"
	"github.com/loki-sh/loki/internal/session/peerenv"
	"github.com/loki-sh/loki/internal/session/status"
)

// repeated is the session's repeatable flag (sessionflags.Repeated).
type repeated = sessionflags.Repeated

func sessionCommand() *cli.Command {
	return &cli.Command{
		Name:      "session",
		Usage:     "run an agent as the peer of loki-init, relaying its stdio byte-exactly",
		UsageText: "loki-supervise session [flags] -- CMD [ARGS...]",
		Description: `Runs CMD under a fresh loki-init (a trusted PID 1) and relays stdin to it and its
stdout/stderr back, byte for byte: an ACP client can talk to the agent through it.
loki-supervise holds the lease: if it dies, even by kill -9, the whole session is
gone within --lease-duration plus one poll.

Isolation (--isolation):
  namespace  (Linux default) new PID + mount namespace made by loki-supervise itself;
             fresh /proc, control dir read-only, the peer has no capabilities.
  oci        an OCI bundle run by crun or runc (--runtime) on --rootfs DIR.
  docker     docker run -i --rm of --image with loki-init as entrypoint; the agent gets
             the image's ENV and WORKDIR (then TERM, LANG, LC_*, TZ and --env, --cwd).
  none       no namespace and no lease: the peer runs in its own session (macOS default).

Confinement (docs/confinement.md): on every backend /sys and /proc/sys are read-only
and Docker's masked paths (/proc/kcore, /proc/keys, /sys/firmware, ...) are hidden.
  --user UID[:GID]   loki-init and the agent run as that user (root supervisor only,
                     or your own ids); the lease stays readable to it, never writable.
  --network MODE     host (default); loopback: own network namespace, only 127.0.0.1;
                     none: own namespace, nothing reachable (lo down on namespace).
  --fs confined      (namespace default) host files read-only, writable only the cwd
                     and --write PATH; private /tmp; minimal /dev. --fs host: as before.
                     HOME is read-only too, except known agents' state (~/.claude,
                     ~/.claude.json, ~/.gemini, ~/.codex, ~/.npm: kept across sessions;
                     --agent-state none to drop it). Git hooks and config, shell rc
                     files, ~/.ssh, ~/.gnupg and the agents' hook/MCP settings stay
                     read-only even there unless --write names them exactly.
  --print-policy     print what the agent may write, read and not see, and why; exit.
  --hide PATH        the agent sees PATH empty (e.g. --hide ~/.ssh).
  --socket PATH      the host's unix socket PATH, at its path; no other host socket is
                     reachable (/run is private too, like /tmp).
  --tmp-size SIZE    each of the private /tmp and /dev/shm (default 512M, or half of
                     --memory-max); what fills them counts against --memory-max.
  --pids-max N       at most N tasks in the session (default 4096; 0 or max: none);
  --memory-max SIZE  e.g. 512M, no swap beyond it; an OOM kill exits 137, said on stderr;
  --cpu-max CPUS     e.g. 0.5, or "QUOTA PERIOD" (µs). Through the session's own cgroup
                     (v1 or v2) on namespace and oci (with linux.resources); docker's flags.
A backend that cannot give what is asked exits 127 with one line; none refuses all of it.

Policy file (docs/policy.md): --policy FILE, else the workspace's .loki/policy.toml,
else ~/.config/loki/policy.toml holds the same settings as the flags (TOML, strict;
flags override it); --profile NAME lays [profile.NAME] over it, and claude, codex and
gemini are built in (the variables each agent needs, e.g. ANTHROPIC_API_KEY).
A workspace's own file may narrow the session, never widen it.

Environment: the agent gets HOME LANG LC_ALL LC_CTYPE LOGNAME PATH TERM TZ USER (when
set) plus what --env names, never the supervisor's whole environment.

Exit code: the session's (the peer's code, 124 lease expired, 125 refused/failed or
peer killed by a signal); 127 when the backend could not start; 128+N when signal N
to loki-supervise ended the session (Ctrl-C: 130), or had to be followed by a kill
after --stop-timeout; 2 for usage errors.

Examples:
  loki-supervise session -- claude --acp
  loki-supervise session --env ANTHROPIC_API_KEY --env NO_COLOR=1 -- codex acp
  loki-supervise session --isolation oci --runtime runc --rootfs /srv/agent-rootfs \
      --bind /home/me/proj:/work --cwd /work -- /usr/bin/agent
  echo '{"jsonrpc":"2.0","id":1,"method":"ping"}' | loki-supervise session --eof wait -- ./rpc-server
  loki-supervise session -t -- bash      # a shell with job control, on a terminal of its own

Terminal (-t/--tty): loki-init runs the agent on a pseudo-terminal allocated inside the
isolation, as a session leader in the foreground (^C, ^Z, ^\ and window resizes reach it);
this terminal is in raw mode meanwhile and restored on every way out (after a kill -9 of
loki-supervise itself, type "reset"). stdout and stderr are then one stream.

Stdin EOF (--eof): when stdin is a pipe or a socket, its EOF is the client's hang-up
and, like the reference, ends a single-shot session: an agent still running 1 s later
is ended (exit 0, or the nonzero code it already earned; 125 with "eof-cut-output" when
it was still writing, so a cut-off output never looks like success). Interactive clients
(ACP) keep stdin open until they have their answer; a script that pipes one request in
and wants the whole reply passes --eof wait (or --wait-after-eof). A stdin that is
/dev/null, a file or a terminal (cron, CI, "< request.json") waits for the agent to
exit; --eof end cuts it there too. The same rule on every backend.

Status stream (--status-fd N, --status-file PATH; docs/status.md): JSON lines, start
(backend, effective policy, what it can observe), refused (egress, syscalls, pids,
memory, with counts), end (code and reason: peer-exit, eof-ended, limit-pids, lease-expired, ...).
At the end one line on stderr names the most frequent refusals (--quiet: none).`,
		Flags: sessionflags.Session(),
		Action: func(c *cli.Context) error {
			return runSession(c)
		},
	}
}

// confinePolicy parses the confinement flags once, for every backend.
func confinePolicy(c *cli.Context) (confine.Policy, error) {
	wd, err := os.Getwd()
	if err != nil {
		return confine.Policy{}, usage("%v", err)
	}
	p, err := sessionflags.Policy(c, func(flag string, paths []string) ([]string, error) {
		return confine.ParsePaths(flag, paths, wd)
	})
	if err != nil {
		return p, err
	}
	for _, s := range p.Sockets {
		if fi, err := os.Stat(s); err != nil || fi.Mode().Type() != os.ModeSocket {
			return confine.Policy{}, usage("--socket %s: not a unix socket", s)
		}
	}
	return p, nil
}

// statusStream opens --status-fd or --status-file; the recorder exists
// without them too (the summary line counts refusals).
func statusStream(c *cli.Context) (*status.Recorder, error) {
	var sink *status.Sink
	var err error
	switch fd, path := c.Int("status-fd"), c.String("status-file"); {
	case c.IsSet("status-fd") && path != "":
		return nil, usage("session: --status-fd and --status-file: pick one")
	case c.IsSet("status-fd"):
		sink, err = status.OpenFD(fd)
	case path != "":
		sink, err = status.OpenFile(path)
	}
	if err != nil {
		return nil, usage("session: %v", err)
	}
	return status.New(sink), nil
}

func usage(format string, a ...any) error { return exitcode.Usage(fmt.Errorf(format, a...)) }

func runSession(c *cli.Context) error {
	argv := c.Args().Slice()
	if len(argv) == 0 {
		return usage("session: no command given: loki-supervise session [flags] -- CMD [ARGS...]")
	}
	if err := sessionflags.PositiveDurations(c, append(sessionflags.Timing, "stop-timeout")...); err != nil {
		return err
	}
	settings, err := applyPolicyFile(c, policyWorkspace(c))
	if err != nil {
		return err
	}
	policy, err := peerenv.Parse(*c.Generic("env").(*repeated), c.Bool("no-default-env"))
	if err != nil {
		return usage("session: %v", err)
	}
	policy.TTY = c.Bool("tty")
	confinement, err := confinePolicy(c)
	if err != nil {
		return err
	}
	if err := sessionflags.AllowHosts(c, &confinement); err != nil {
		return err
	}
	isolation := c.String("isolation")
	if err := hideExists(isolation, confinement.Hide); err != nil {
		return err
	}
	cwd, err := sessionCwd(c, isolation)
	if err != nil {
		return usage("session: %v", err)
	}
	if isolation == namespace.Name || isolation == none.Name {
		if err := session.CheckHostCwd(cwd); err != nil {
			return notLaunched(err)
		}
	}
	backend, err := makeBackend(c, isolation, policy)
	if err != nil {
		return err
	}
	// The docker backend replaces it with the image's (Prepare).
	env := policy.Build(os.Environ())
	plan, err := agentFiles(c.String("agent-state"), isolation, cwd, env, argv, confinement)
	if err != nil {
		return err
	}
	if c.Bool("print-policy") {
		view := policyView(isolation, cwd, confinement, plan)
		view.Settings = settings
		return printPolicy(c, view)
	}
	if err := applyAgentFiles(plan, &confinement); err != nil {
		return err
	}
	eof, err := sessionflags.EOFRule(c)
	if err != nil {
		return err
	}
	stdin := os.Stdin
	if p := c.String("stdin-from"); p != "" {
		if stdin, err = os.Open(p); err != nil {
			return usage("session: %v", err)
		}
	}
	peer := launch.Spec{Argv: argv, Cwd: cwd, Env: env}
	rec, err := statusStream(c)
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 4)
	// Never stopped: the process exits once Run returns, and a signal.Stop
	// would hand each of the three signals in turn to the runtime's
	// signal-mask thread and wait for it, on the exit path of every
	// session. A signal after Run is caught and dropped; the exit code
	// stays the session's.
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	return session.Run(session.Config{
		Backend:       backend,
		Peer:          peer,
		CheckCommand:  isolation == namespace.Name || isolation == none.Name,
		Status:        rec,
		Quiet:         c.Bool("quiet"),
		LeaseDuration: c.Duration("lease-duration"),
		RenewInterval: c.Duration("renew-interval"),
		PollInterval:  c.Duration("poll-interval"),
		Grace:         c.Duration("grace"),
		StopTimeout:   c.Duration("stop-timeout"),
		EOF:           eof,
		TTY:           c.Bool("tty"),
		Relay:         c.Bool("relay"),
		ControlRoot:   c.String("control-root"),
		Confine:       confinement,
		Stdin:         stdin,
		Stdout:        os.Stdout,
		Stderr:        os.Stderr,
		Signals:       sigs,
		Notes:         os.Stderr,
	})
}

func sessionCwd(c *cli.Context, isolation string) (string, error) {
	if d := c.String("cwd"); d != "" {
		if isolation == namespace.Name || isolation == none.Name {
			return filepath.Abs(d)
		}
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("--cwd %s: must be absolute inside the container", d)
		}
		return d, nil
	}
	if isolation == oci.Name {
		return "/", nil
	}
	if isolation == docker.Name {
		return "", nil // the image's WORKDIR (docker's Prepare)
	}
	return os.Getwd()
}

func notLaunched(err error) error { return exitcode.NotLaunched(err) }

// makeBackend builds the backend from its own flags; each backend
// translates the session's policy itself when it starts.
func makeBackend(c *cli.Context, isolation string, env peerenv.Policy) (session.Backend, error) {
	switch isolation {
	case none.Name:
		return none.Backend{}, nil
	case namespace.Name, oci.Name, docker.Name:
	default:
		return nil, usage("session: --isolation %q: want namespace, oci, docker or none", isolation)
	}
	init, err := session.FindInit(c.String("init"))
	if err != nil {
		return nil, notLaunched(err)
	}
	warn := func(s string) { fmt.Fprintln(os.Stderr, "loki-supervise: "+s) }
	switch isolation {
	case namespace.Name:
		return &namespace.Backend{Init: init, NoParentDeathSignal: c.Bool("no-parent-death-signal"), Warn: warn}, nil
	case oci.Name:
		if _, _, err := oci.ResolveRuntime(c.String("runtime")); err != nil {
			return nil, notLaunched(err)
		}
		opts, err := bundleOptions(c, init)
		if err != nil {
			return nil, err
		}
		return &oci.Backend{Runtime: c.String("runtime"), Options: opts, Warn: warn}, nil
	default:
		if _, err := parseBinds(c); err != nil {
			return nil, err
		}
		return &docker.Backend{Env: env, Options: docker.Options{
			Docker: c.String("docker"), Image: c.String("image"), Init: init,
			Binds: *c.Generic("bind").(*repeated), WritableRootfs: c.Bool("writable-rootfs"),
		}}, nil
	}
}

// parseBinds reads --bind (oci, docker).
func parseBinds(c *cli.Context) ([]mounts.Bind, error) {
	var binds []mounts.Bind
	for _, s := range *c.Generic("bind").(*repeated) {
		b, err := mounts.ParseBind(s)
		if err != nil {
			return nil, usage("%v", err)
		}
		binds = append(binds, b)
	}
	return binds, nil
}

func bundleOptions(c *cli.Context, init string) (oci.Options, error) {
	rootfs := c.String("rootfs")
	if rootfs == "" {
		return oci.Options{}, usage("--rootfs DIR is required for the oci backend (a directory with the agent's filesystem)")
	}
	rootfs, err := filepath.Abs(rootfs)
	if err != nil {
		return oci.Options{}, usage("--rootfs: %v", err)
	}
	if st, err := os.Stat(rootfs); err != nil || !st.IsDir() {
		return oci.Options{}, usage("--rootfs %s: not a directory", rootfs)
	}
	binds, err := parseBinds(c)
	if err != nil {
		return oci.Options{}, err
	}
	return oci.Options{Rootfs: rootfs, Init: init, WritableRootfs: c.Bool("writable-rootfs"), Binds: binds}, nil
}

// hideExists refuses a --hide path that is not there on a backend that
// shows the host's files: it would hide nothing, and is most likely a
// typo (--hide ~/.shh). In a container the path is the image's, which
// the host cannot check.
func hideExists(isolation string, hide []string) error {
	if isolation != namespace.Name && isolation != none.Name {
		return nil
	}
	for _, h := range hide {
		if _, err := os.Lstat(h); err != nil {
			return usage("session: --hide %s: no such file or directory here, so it would hide nothing (a typo?)", h)
		}
	}
	return nil
}
