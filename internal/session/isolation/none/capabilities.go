//go:build unix

package none

import (
	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/confine"
)

// Capabilities: none runs the peer as the supervisor's own process, with
// no namespace, no cgroup and no loki-init, so it gives no confinement
// knob beyond what that already is (the host's ids and files).
func (Backend) Capabilities() session.Capabilities {
	confined := session.Refused("use --isolation namespace or oci, which apply it")
	limits := session.Refused("it makes no cgroup; use --isolation namespace, oci or docker, which apply it")
	return session.Capabilities{
		Syscalls: "none",
		Knobs: map[confine.Knob]session.Support{
			confine.KnobUser:            confined,
			confine.KnobUserNSPrivate:   session.Refused("use --isolation namespace, or --user UID to run the agent unprivileged"),
			confine.KnobUserNSHost:      session.Given,
			confine.KnobAllowHost:       session.Refused("it runs no egress proxy; use --isolation namespace"),
			confine.KnobNetworkLoopback: confined,
			confine.KnobNetworkNone:     confined,
			confine.KnobFSConfined:      confined,
			confine.KnobFSHost:          session.Given,
			confine.KnobWrite:           confined,
			confine.KnobHide:            confined,
			confine.KnobProtect:         confined,
			confine.KnobSocket:          session.Given, // the peer sees the host's files already
			confine.KnobTmpSize:         session.Refused("it has no private /tmp; use --isolation namespace, oci or docker, which have one"),
			confine.KnobPidsMax:         limits,
			confine.KnobMemoryMax:       limits,
			confine.KnobCPUMax:          limits,
			confine.KnobTTY:             session.Refused("it runs no loki-init to open one; use --isolation namespace, oci or docker"),
		},
	}
}

// Prepare leaves the peer and the policy as the session gave them.
func (Backend) Prepare(*launch.Spec, *confine.Policy) error { return nil }
