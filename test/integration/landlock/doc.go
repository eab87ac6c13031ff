// Package landlock tests the built loki-supervise's Linux enforcer of the
// host boundary: a `build` or `run` with LOKI_HOST_LANDLOCK=1 runs its
// runner under a Landlock ruleset made from the LOKI_HOST_* variables.
// The runner writes its workspace and the runtime write path, reads the
// system and runs /bin/sh, and is refused (EACCES) a write outside them
// and a read of a directory no variable names; with Landlock missing
// (the kernel made to answer EOPNOTSUPP, as with Landlock disabled at
// boot) the run is refused with 127 and one line, and recorded so.
package landlock
