// Package docker is the docker isolation backend: "docker run -i --rm"
// of a caller-given image with loki-init as the entrypoint.
//
// Args is the whole command line and is unit-tested argument by argument:
// loki-init and the control dir are bind-mounted read-only from the host
// (so the daemon must share this host's filesystem), binds are --mount
// binds (a missing source is an error, never created), every capability
// is dropped, no-new-privileges is set, a pids limit applies, and the root
// filesystem is read-only with a tmpfs /tmp unless asked otherwise. The
// container gets no environment of its own: the peer's env travels in the
// prelude, built from the image's ENV and WORKDIR (Inspect, PeerEnv).
//
// Outcomes, tested against a real engine (test/integration/session):
// docker's own failures are never passed on as a session code. No
// container created (no cid file) is 127 with a hint that fits (no
// daemon, no such image, docker's message); created but never started
// (no start event) is 127; the CLI ending while the container still
// exists (its stdout closed) is lost output (125); loki-init killed by
// the engine (a kill or oom event matching the 128+N code) is a death by
// signal N (125). Every docker call besides "docker run" is bounded, and
// signals and kills are sent in the background, so a daemon that stops
// answering never holds the supervisor: a kill that docker does not carry
// out in time kills the CLI, and the lease ends the container.
//
// Refused forks at the pids limit are counted in a cgroup of the
// session's own (internal/session/cgroup), into which Start moves the
// container's init before it returns (cgroup v1, a local daemon, a user
// that may make cgroups): the engine's cgroup goes with the container.
package docker
