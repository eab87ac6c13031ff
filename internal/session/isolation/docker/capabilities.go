package docker

import (
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/seccomp"
	"github.com/loki-sh/loki/internal/session/status"
)

// Capabilities: the container sees only its image (no --fs host), there
// is no egress proxy, and a user namespace is the daemon's (userns-remap),
// never one of the session's. The docker client copies the init's stdin
// itself.
func (b *Backend) Capabilities() session.Capabilities {
	return session.Capabilities{
		Init:        true,
		MinPidsMax:  confine.MinSharedPidsMax,
		CopiesStdin: true,
		Observes:    []status.Kind{status.Pids, status.Memory},
		Syscalls:    seccomp.Name,
		Knobs: map[confine.Knob]session.Support{
			confine.KnobUser:            session.Given,
			confine.KnobUserNSPrivate:   session.Refused("use --user UID, or the daemon's userns-remap"),
			confine.KnobUserNSHost:      session.Given,
			confine.KnobAllowHost:       session.Refused("it runs no egress proxy; use --isolation namespace"),
			confine.KnobNetworkLoopback: session.Given,
			confine.KnobNetworkNone:     session.Given,
			confine.KnobFSConfined:      session.Given,
			confine.KnobFSHost:          session.Refused("the container sees only its image; use --bind SRC:DST and --writable-rootfs, or --isolation namespace"),
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
