// Package handoff is the session side of the egress proxy's listener
// handoff: the namespace's PID 1 makes the listener in the session's
// network namespace and sends its descriptor to the supervisor, which
// serves it (package egress, ReceiveListener).
//
// Guarantee: it links nothing beyond the standard library's basics and
// x/sys/unix (no net, no net/http), so the trusted loki-init can import it.
package handoff

// ProxyPort is where the proxy listens on the session's own loopback.
const ProxyPort = 3128
