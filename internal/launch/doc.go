// Package launch owns the launch prelude: the one message the host sends the
// init before any peer byte.
//
// Wire format: a 4-byte big-endian length N with 0 < N <= MaxSize, then N
// bytes of a JSON object {"argv": [...], "cwd": "...", "env": {...}}, with
// an optional "tty": {"rows": R, "cols": C} that asks for a pseudo-terminal
// (WinsizeFile carries later resizes through the control dir).
// Encode is the host side; ParseLength and Parse are the init side and
// refuse every malformed input with a sentinel error. Nothing here reads a
// stream: the init reads exactly 4+N bytes under its own lease checks, so no
// byte meant for the peer is ever consumed. Errors never quote the input,
// because the env carries secrets.
//
// LookPath is how a launch's argv[0] is found, in the launch's own env and
// cwd: the init and the supervisor's runners (package lineage) share it,
// so a command resolves the same wherever it is started.
package launch
