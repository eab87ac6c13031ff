package oci

import (
	"os"

	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/seccomp"
	"github.com/loki-sh/loki/internal/session/status"
)

// Capabilities: the container sees only its rootfs (no --fs host), there
// is no egress proxy, a private user namespace needs root (the runtime
// maps a block of ids) and --pids-max a pids controller. What depends on
// the rootfs, loki-init's modes and the runtime's version is found when
// the bundle is made (Config, CheckIDMap).
func (b *Backend) Capabilities() session.Capabilities {
	userNSPrivate := session.Given
	if os.Geteuid() != 0 {
		userNSPrivate = session.Refused("it needs root (the runtime maps a block of ids): run as root, or use --isolation namespace")
	}
	pids := session.Given
	if !PidsControllerAvailable() {
		pids = session.Refused("this host has no pids cgroup controller; drop --pids-max (loki-supervise doctor)")
	}
	return session.Capabilities{
		Init:          true,
		MinPidsMax:    confine.MinSharedPidsMax,
		PrivateUserNS: true,
		// The runtime's --preserve-fds 1: the client's stdin is fd 3.
		DirectStdinFD: 3,
		Observes:      []status.Kind{status.Pids, status.Memory},
		Syscalls:      seccomp.Name,
		Knobs: map[confine.Knob]session.Support{
			confine.KnobUser:            session.Given,
			confine.KnobUserNSPrivate:   userNSPrivate,
			confine.KnobUserNSHost:      session.Given,
			confine.KnobAllowHost:       session.Refused("it runs no egress proxy; use --isolation namespace"),
			confine.KnobNetworkLoopback: session.Given,
			confine.KnobNetworkNone:     session.Given,
			confine.KnobFSConfined:      session.Given,
			confine.KnobFSHost:          session.Refused("the container sees only --rootfs; use --writable-rootfs and --bind SRC:DST"),
			confine.KnobWrite:           session.Given,
			confine.KnobHide:            session.Given,
			confine.KnobProtect:         session.Given,
			confine.KnobSocket:          session.Given,
			confine.KnobTmpSize:         session.Given,
			confine.KnobPidsMax:         pids,
			confine.KnobMemoryMax:       session.Given,
			confine.KnobCPUMax:          session.Given,
			confine.KnobTTY:             session.Given,
		},
	}
}

// Prepare leaves the peer and the policy as the session gave them.
func (b *Backend) Prepare(*launch.Spec, *confine.Policy) error { return nil }
