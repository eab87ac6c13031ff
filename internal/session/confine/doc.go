// Package confine is the one confinement policy of a session: what the
// agent may reach (its user, its network). It is parsed once, from the
// session's (and oci-spec's) flags, and each isolation backend applies it
// with its own mechanism. A backend that cannot apply a part of a policy
// refuses the whole session (ErrUnsupported): a session never runs less
// confined than it asked.
//
// The parts every backend applies without being asked (they are not
// options): /sys and /proc/sys read-only, and the kernel files Docker's
// default config masks (MaskedPaths) hidden, so a peer with uid 0 cannot
// write cgroup files or sysctls of the host.
package confine
