package kubecli

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/cmd/internal/sessionflags"
)

// PodSpec is `pod-spec`: it takes the session's flags, and refuses
// those a Pod cannot express.
func PodSpec() *cli.Command {
	return &cli.Command{
		Name:      "pod-spec",
		Usage:     "print the Kubernetes Pod that runs a session (docs/cluster.md)",
		UsageText: "loki-supervise pod-spec --image IMAGE --loki-image IMAGE [session flags] [-- CMD [ARGS...]] | kubectl apply -f -",
		Description: `Prints the Pod of docs/cluster.md as JSON (--yaml for YAML): loki-init is PID 1 of
the "agent" container (copied from --loki-image by the "loki-install" init container;
shareProcessNamespace stays false), and "lease-holder", a native sidecar, renews the
lease on a memory emptyDir only after its owner said hello on its attach stream and
only while that stream stays open. loki-supervise attach is that owner.

The session flags become the Pod's terms: --user (default 65534:65534; the image's
USER is never used), a read-only root (--writable-rootfs), no capabilities, no
privilege escalation, seccomp RuntimeDefault, --memory-max and --cpu-max as
resources.limits (requests equal), --write PATH and --bind SRC:DST as hostPath
volumes (the node's paths, which must exist), --hide PATH as an empty read-only
volume, /tmp an emptyDir. What a Pod cannot express is refused with one line (127):
--pids-max (set the kubelet's podPidsLimit), --network loopback|none and --allow-host
(use a NetworkPolicy), --userns private, --fs host. Session flags of this host's side
(--env, --tty, --runtime, ...) exit 2.

CMD and --cwd are kept in the annotation loki.sh/launch, where attach finds them; the
environment never enters the Pod (its values are secrets): attach sends it.

The loki image holds /loki/loki-supervise and /loki/loki-init (both static):
  FROM scratch
  COPY bin/loki-supervise bin/loki-init /loki/

Example:
  loki-supervise pod-spec --name s1 --image agent:1 --loki-image loki:1 --user 1000 \
      --memory-max 2G --cpu-max 1 -- claude --acp | kubectl apply -f -`,
		Flags: append(sessionflags.Session(),
			&cli.StringFlag{Name: "name", Value: "loki-session", Usage: "the Pod's name"},
			&cli.StringFlag{Name: "namespace", Usage: "the Pod's namespace (default: kubectl's)"},
			&cli.StringFlag{Name: "loki-image", Usage: "image with /loki/loki-supervise and /loki/loki-init (required)"},
			&cli.DurationFlag{Name: "owner-wait", Value: time.Minute, Usage: "the lease holder stops renewing unless its owner attaches within this"},
			&cli.BoolFlag{Name: "yaml", Usage: "print YAML instead of JSON"}),
	}
}

// Attach is `attach`, the owner of a pod-spec Pod's session.
func Attach() *cli.Command {
	return &cli.Command{
		Name:      "attach",
		Usage:     "be the owner of a pod-spec Pod's session over the node's CRI (docs/cluster.md)",
		UsageText: "loki-supervise attach --runtime-endpoint unix:///run/containerd/containerd.sock --pod NAME [--namespace NS] [--env NAME[=VALUE]]... [-- CMD [ARGS...]]",
		Description: `The owner's side of the Pod that pod-spec prints, through the CRI the kubelet
drives (run it on the Pod's node): attaches to the lease-holder (which renews only
while this stream is open: this process's death ends the agent at the lease bound,
124), writes the launch prelude (CMD, or the Pod's loki.sh/launch annotation; the
environment from --env and the defaults, as session builds it) and then its own
stdin on the agent's attach stream, relays the agent's stdout and stderr byte for
byte, and exits with the agent container's exit code.

An attach that ends before the streaming server's final status, or while the agent
container still runs, may have lost output: exit 125 with one line. The containers
must be running within --start-timeout (127 otherwise).

Example:
  loki-supervise attach --runtime-endpoint unix:///run/containerd/containerd.sock \
      --pod s1 --namespace default --env ANTHROPIC_API_KEY`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "runtime-endpoint", Value: "unix:///run/containerd/containerd.sock", Usage: "the node's CRI socket"},
			&cli.StringFlag{Name: "pod", Value: "loki-session", Usage: "the Pod's name"},
			&cli.StringFlag{Name: "namespace", Value: "default", Usage: "the Pod's namespace"},
			&cli.GenericFlag{Name: "env", Value: &sessionflags.Repeated{}, Usage: "pass NAME from this environment, or set NAME=VALUE (repeatable)"},
			&cli.BoolFlag{Name: "no-default-env", Usage: "do not pass the default variables (HOME, PATH, ...)"},
			&cli.StringFlag{Name: "cwd", Usage: "the agent's working directory (default: the Pod's annotation, else /)"},
			&cli.DurationFlag{Name: "start-timeout", Value: 2 * time.Minute, Usage: "how long to wait for the Pod's containers to run"},
		},
	}
}
