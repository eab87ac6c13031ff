// Package docker is the docker isolation backend: "docker run -i
// --rm" of a caller-given image with loki-init as the entrypoint.
//
// Args is the whole contract and is unit-tested argument by argument:
// loki-init and the control dir are bind-mounted read-only from the host
// (so the daemon must share this host's filesystem), every capability is
// dropped, no-new-privileges is set, a pids limit applies, and the root
// filesystem is read-only with a tmpfs /tmp unless asked otherwise. The
// container gets no environment of its own: the peer's env travels in the
// prelude. Signals go through "docker kill" by container name, and "docker
// rm -f" runs at the end. "docker run" writes a cid file into the session's
// scratch dir once the container exists; exit 125 without it means docker
// itself failed (typically: no daemon), which is reported as "the backend
// could not start" (127) with the fix, never as a session code. No Docker
// engine runs where loki is tested, so this backend is untested end to end
// beyond that failure path.
package docker
