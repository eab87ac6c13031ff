// Package kubernetes turns a session's confinement policy into the Pod of
// docs/cluster.md: loki-init as PID 1 of the agent container (no shared
// PID namespace), a lease-holder sidecar that renews the control volume's
// lease only while the session's owner keeps its attach stream open, and
// the policy in the Pod's own terms (securityContext, resources.limits,
// volumes).
//
// Guarantee: Pod never drops a part of the policy. Capabilities is the
// Pod's entry in the capability table, and Pod admits a policy through
// session.Admit as every backend does: what a Pod cannot express (a
// per-Pod pids limit, a network of its own, an egress allowlist, a user
// namespace the API server may silently strip, a terminal) is refused
// with confine.ErrUnsupported and one line naming the fix. The
// peer's environment is never in the Pod: it travels in the prelude,
// written by the owner on the agent's attach stream (package attach).
package kubernetes
