package sessionflags

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/lease"
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/egress"
	"github.com/loki-sh/loki/internal/session/isolation/namespace"
	"github.com/loki-sh/loki/internal/session/isolation/none"
)

func usage(format string, a ...any) error { return exitcode.Usage(fmt.Errorf(format, a...)) }

// Repeated is a flag that may be given many times; unlike cli.StringSlice
// it never splits a value on commas (an --env value may contain them).
type Repeated []string

func (r *Repeated) Set(v string) error { *r = append(*r, v); return nil }
func (r *Repeated) String() string     { return strings.Join(*r, " ") }

// DefaultIsolation is --isolation's default on this OS.
func DefaultIsolation() string {
	if runtime.GOOS == "linux" {
		return namespace.Name
	}
	return none.Name
}

// Session are the session command's flags (pod-spec takes them too, to
// refuse what a Pod cannot express).
func Session() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "isolation", Value: DefaultIsolation(), EnvVars: []string{"LOKI_ISOLATION"},
			Usage: "namespace | oci | docker | none"},
		&cli.GenericFlag{Name: "env", Value: &Repeated{},
			Usage: "pass NAME from this environment, or set NAME=VALUE (repeatable)"},
		&cli.BoolFlag{Name: "no-default-env", Usage: "do not pass the default variables (HOME, PATH, ...)"},
		&cli.StringFlag{Name: "cwd", Usage: "the agent's working directory (default: the current one; / for oci; the image's WORKDIR or / for docker)"},
		&cli.BoolFlag{Name: "tty", Aliases: []string{"t"}, Usage: "run the agent on a terminal inside the isolation (stdin must be a terminal; stdout and stderr become one stream; not with --isolation none)"},
		&cli.StringFlag{Name: "stdin-from", Hidden: true},
		&cli.BoolFlag{Name: "relay", Hidden: true}, // keep the stdio relay (benchmarks, tests)
		&cli.IntFlag{Name: "status-fd", Usage: "write the session's status stream (JSON lines: start, refused, end; docs/status.md) to this inherited descriptor, e.g. 3 with 3>status.jsonl"},
		&cli.StringFlag{Name: "status-file", Usage: "append the session's status stream to PATH (created 0600; fsynced at the end)"},
		&cli.BoolFlag{Name: "quiet", Usage: "no summary line of what was refused at the end"},
		&cli.DurationFlag{Name: "stop-timeout", Value: session.DefaultStopTimeout,
			Usage: "after forwarding SIGTERM/SIGINT, kill the session if it has not ended by then"},
		&cli.StringFlag{Name: "control-root", Usage: "parent of the private control dirs (default /run/loki for root, else $XDG_RUNTIME_DIR/loki)"},
		&cli.StringFlag{Name: "runtime", Value: "crun", Usage: "oci: crun or runc, or a path to one"},
		&cli.StringFlag{Name: "image", Usage: "docker: the image to run"},
		&cli.StringFlag{Name: "docker", Value: "docker", Usage: "docker: the Docker CLI"},
		&cli.BoolFlag{Name: "no-parent-death-signal", Hidden: true},
		&cli.GenericFlag{Name: "allow-host", Value: &Repeated{},
			Usage: "namespace: the agent's only way out is an HTTP proxy (HTTPS_PROXY, HTTP_PROXY) that reaches HOST, HOST:PORT or *.DOMAIN and nothing else (repeatable; the port defaults to 443 and 80; implies --network loopback)"},
	}, append(append(AgentFiles(), PolicyFile()...), Bundle()...)...)
}

// Bundle are the flags session shares with oci-spec.
func Bundle() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "init", Usage: "loki-init binary (default: next to loki-supervise, else on PATH)"},
		&cli.DurationFlag{Name: "lease-duration", Value: lease.DefaultDuration, Usage: "the session ends when no renewal is seen for this long"},
		&cli.DurationFlag{Name: "renew-interval", Value: lease.DefaultRenew, Usage: "how often the lease is renewed"},
		&cli.DurationFlag{Name: "poll-interval", Value: session.DefaultPollInterval, Usage: "how often loki-init checks the lease"},
		&cli.DurationFlag{Name: "grace", Value: session.DefaultGrace, Usage: "loki-init's delay between forwarding SIGTERM to the peer and killing it"},
		&cli.StringFlag{Name: "eof", Value: "auto", Usage: "what stdin's EOF does: end (a peer still running 1 s later is ended: the reference's single-shot rule), wait (it runs until it exits; the lease still bounds it), auto (end when stdin is a pipe or socket, wait for /dev/null, a file or a terminal)"},
		&cli.BoolFlag{Name: "wait-after-eof", Usage: "the same as --eof wait"},
		&cli.StringFlag{Name: "rootfs", Usage: "oci: root filesystem directory of the container"},
		&cli.GenericFlag{Name: "bind", Value: &Repeated{}, Usage: "oci/docker: expose SRC at DST, SRC:DST[:ro|:rw] (repeatable)"},
		&cli.BoolFlag{Name: "writable-rootfs", Usage: "oci/docker: do not make the root filesystem read-only"},
		&cli.StringFlag{Name: "user", Usage: "run loki-init and the agent as UID[:GID] (numbers; default: the supervisor's own)"},
		&cli.StringFlag{Name: "userns", Usage: "private (namespace and oci default as root: the agent's root is an unprivileged host uid; the cwd, --write and HOME (oci: --write and rw --bind) stay usable through idmapped mounts) | host (the host's ids: as root, uid 0 without capabilities; the default with --user or --fs host)"},
		&cli.StringFlag{Name: "network", Value: string(confine.NetworkHost),
			Usage: "host (share the host's) | loopback (own namespace, lo up: 127.0.0.1 only) | none (own namespace, lo down: nothing at all)"},
		&cli.StringFlag{Name: "fs", Usage: "confined (namespace/oci/docker default: host files read-only, writable only the cwd and --write, private /tmp, minimal /dev) | host (none's default: as the peer's uid may)"},
		&cli.GenericFlag{Name: "write", Value: &Repeated{}, Usage: "confined fs: also let the agent write PATH (repeatable)"},
		&cli.GenericFlag{Name: "hide", Value: &Repeated{}, Usage: "show PATH empty to the agent, e.g. ~/.ssh (repeatable)"},
		&cli.GenericFlag{Name: "socket", Value: &Repeated{}, Usage: "let the agent connect to the host's unix socket PATH, shown at its path (repeatable; the host's other sockets stay out of reach)"},
	}, Resources()...)
}

// Policy parses the confinement flags, with the --write/--hide paths
// read by parsePaths: this host's paths for a session, a node's for pod-spec.
func Policy(c *cli.Context, parsePaths func(flag string, paths []string) ([]string, error)) (confine.Policy, error) {
	user, err := confine.ParseUser(c.String("user"))
	if err != nil {
		return confine.Policy{}, usage("%v", err)
	}
	userns, err := confine.ParseUserNS(c.String("userns"))
	if err != nil {
		return confine.Policy{}, usage("%v", err)
	}
	network, err := confine.ParseNetwork(c.String("network"))
	if err != nil {
		return confine.Policy{}, usage("%v", err)
	}
	fs, err := confine.ParseFS(c.String("fs"))
	if err != nil {
		return confine.Policy{}, usage("%v", err)
	}
	write, err := parsePaths("write", *c.Generic("write").(*Repeated))
	if err != nil {
		return confine.Policy{}, usage("%v", err)
	}
	hide, err := parsePaths("hide", *c.Generic("hide").(*Repeated))
	if err != nil {
		return confine.Policy{}, usage("%v", err)
	}
	sockets, err := parsePaths("socket", *c.Generic("socket").(*Repeated))
	if err != nil {
		return confine.Policy{}, usage("%v", err)
	}
	res, err := ParseResources(c)
	if err != nil {
		return confine.Policy{}, err
	}
	return confine.Policy{User: user, UserNS: userns, Network: network, FS: fs, Write: write, Hide: hide, Sockets: sockets, Resources: res}, nil
}

// EOFRule reads --eof and its older spelling --wait-after-eof.
func EOFRule(c *cli.Context) (session.EOFRule, error) {
	rule, err := session.ParseEOFRule(c.String("eof"))
	if err != nil {
		return rule, usage("%v", err)
	}
	if c.Bool("wait-after-eof") {
		if rule == session.EOFEnd {
			return rule, usage("--wait-after-eof is --eof wait: drop one of --eof end and --wait-after-eof")
		}
		rule = session.EOFWait
	}
	return rule, nil
}

// PositiveDurations refuses a zero or negative value of any of the named
// duration flags: the session code would quietly replace it by its
// default, so the run would not be the one asked for.
func PositiveDurations(c *cli.Context, names ...string) error {
	for _, n := range names {
		if d := c.Duration(n); d <= 0 {
			return usage("--%s %v: must be a positive duration (e.g. 500ms, 5s)", n, d)
		}
	}
	return nil
}

// Timing are the session's duration flags (stop-timeout is the
// session command's own; the rest are shared with oci-spec).
var Timing = []string{"lease-duration", "renew-interval", "poll-interval", "grace"}

// AllowHosts reads --allow-host: the session gets a network namespace of
// its own (loopback, unless --network says otherwise, which Validate
// refuses) whose only way out is the egress proxy.
func AllowHosts(c *cli.Context, p *confine.Policy) error {
	values := *c.Generic("allow-host").(*Repeated)
	if len(values) == 0 {
		return nil
	}
	if _, err := egress.Parse(values); err != nil {
		return usage("session: %v", err)
	}
	if !c.IsSet("network") {
		p.Network = confine.NetworkLoopback
	}
	p.Allow = values
	return nil
}

// PolicyFile are the flags that choose the policy file a session reads.
func PolicyFile() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "policy", Usage: "read the session's settings from this TOML `FILE` (default: the workspace's .loki/policy.toml, else ~/.config/loki/policy.toml); flags override it"},
		&cli.StringFlag{Name: "profile", Usage: "lay the file's [profile.`NAME`] over its top level; built in: claude, codex, gemini (what the agent needs from your environment)"},
		&cli.BoolFlag{Name: "no-policy", Usage: "read no policy file, only the flags"},
	}
}

// AgentFiles are the agent-state knob and --print-policy.
func AgentFiles() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "agent-state", Value: "auto",
			Usage: "auto (namespace: known agents' state, e.g. ~/.claude, ~/.gemini, ~/.codex, writable and kept; made when the command names the agent) | none"},
		&cli.BoolFlag{Name: "print-policy", Usage: "print what the agent may write, read and not see, and why, then exit (with --json: one JSON object)"},
		&cli.BoolFlag{Name: "json", Usage: "with --print-policy: print JSON"},
	}
}

// Resources are the session's cgroup limits (shared with oci-spec).
func Resources() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "pids-max", Aliases: []string{"pids-limit"},
			Usage: "at most N tasks (processes and threads) in the session; 0 or max: no limit (default 4096 on namespace, oci, docker)"},
		&cli.StringFlag{Name: "memory-max",
			Usage: "memory of the whole session, e.g. 512M or 2G (K/M/G/T = 1024^n; no swap beyond it); the kernel OOM-kills at it and the session exits 137"},
		&cli.StringFlag{Name: "cpu-max",
			Usage: "CPU bandwidth: a number of CPUs (0.5, 2) or \"QUOTA PERIOD\" in microseconds as cgroup v2's cpu.max"},
		&cli.StringFlag{Name: "tmp-size",
			Usage: "size of each private tmpfs, /tmp and /dev/shm (e.g. 2G); their pages count against --memory-max (default 512M, or half of --memory-max when smaller)"},
	}
}

// ParseResources reads the resource flags into a policy's Resources.
func ParseResources(c *cli.Context) (confine.Resources, error) {
	pids, err := confine.ParsePidsMax(c.String("pids-max"))
	if err != nil {
		return confine.Resources{}, usage("%v", err)
	}
	mem, err := confine.ParseMemoryMax(c.String("memory-max"))
	if err != nil {
		return confine.Resources{}, usage("%v", err)
	}
	cpu, err := confine.ParseCPUMax(c.String("cpu-max"))
	if err != nil {
		return confine.Resources{}, usage("%v", err)
	}
	tmp, err := confine.ParseTmpSize(c.String("tmp-size"))
	if err != nil {
		return confine.Resources{}, usage("%v", err)
	}
	return confine.Resources{PidsMax: pids, MemoryMax: mem, CPU: cpu, TmpSize: tmp}, nil
}
