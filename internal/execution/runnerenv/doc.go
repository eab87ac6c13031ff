// Package runnerenv builds the environment of a supervised runner.
//
// Guarantee: nothing from the supervisor's environment reaches the runner
// unless its name is on a fixed allowlist of non-secret runtime settings
// (locale, terminal, identity of the user, and a list of LOKI_* tuning
// knobs). Everything else, API keys and tokens included, is dropped. On top
// of the allowlist a few values are forced (PATH, the LOKI_* markers of a
// supervised build, telemetry switches off), and every writable runtime
// location (TMPDIR, XDG_*, npm and bun caches) points at a private 0700
// directory under <loki-dir>/host-runtime, with a private gitconfig that
// only turns commit signing off, so the runner never reads the host user's
// global or system git configuration.
package runnerenv
