// Package peerenv decides which environment variables an agent session
// receives. The rule is an allowlist: the peer gets a small documented
// default set (copied from the supervisor's environment only when present
// there) plus what the caller names explicitly. The supervisor's own
// environment is never passed through as a whole, so a credential exported
// in the shell that starts loki-supervise reaches the agent only when the
// user asks for it by name.
package peerenv
