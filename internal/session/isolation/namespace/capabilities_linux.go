package namespace

import (
	"os"

	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/isolation/namespace/stage"
	"github.com/loki-sh/loki/internal/session/seccomp"
	"github.com/loki-sh/loki/internal/session/status"
)

// Capabilities: everything, and --userns host only as root (without
// root the peer always has a user namespace, mapping the caller's ids).
// A --user other than the caller without root, an unreachable control
// root and a filesystem without idmapped mounts are found at Start.
func (b *Backend) Capabilities() session.Capabilities {
	userNSHost := session.Given
	if os.Geteuid() != 0 {
		userNSHost = session.Refused("it needs root: run loki-supervise as root, or drop --userns (without root the agent always gets a user namespace)")
	}
	return session.Capabilities{
		Init:          true,
		PrivateUserNS: true,
		DirectStdinFD: stage.HostStdinFD,
		// Egress from its proxy, the syscall policy's denials from its
		// listener (with a stream), limits from its cgroup's events.
		Observes: []status.Kind{status.Egress, status.Syscall, status.Pids, status.Memory},
		Syscalls: seccomp.Name,
		Knobs: map[confine.Knob]session.Support{
			confine.KnobUser:            session.Given,
			confine.KnobUserNSPrivate:   session.Given,
			confine.KnobUserNSHost:      userNSHost,
			confine.KnobAllowHost:       session.Given,
			confine.KnobNetworkLoopback: session.Given,
			confine.KnobNetworkNone:     session.Given,
			confine.KnobFSConfined:      session.Given,
			confine.KnobFSHost:          session.Given,
			confine.KnobWrite:           session.Given,
			confine.KnobHide:            session.Given,
			confine.KnobProtect:         session.Given,
			confine.KnobSocket:          session.Given,
			confine.KnobTmpSize:         session.Given,
			confine.KnobPidsMax:         session.Given,
			confine.KnobMemoryMax:       session.Given,
			confine.KnobCPUMax:          session.Given,
			confine.KnobTTY:             session.Given,
		},
	}
}

// Prepare leaves the peer and the policy as the session gave them.
func (b *Backend) Prepare(*launch.Spec, *confine.Policy) error { return nil }
