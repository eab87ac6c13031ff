// Package facts is the wire format of loki-init's facts socket: how the
// init tells its host the peer's pid and how the run ended, in lines of
// fixed words, so the host never parses stderr. One definition, used by
// both binaries (pid1 writes, the session reads) and tested from both
// sides, like the lease and the prelude.
//
// A host may listen on the unix socket CONTROL_DIR/facts (Socket). The
// init connects once, right after the spawn, and writes:
//
//	peer PID          the peer's pid in the init's PID namespace
//	end FIELDS        how the run ended (End.Line)
//	say LINE          the line the init would print on stderr
//
// A host that listens prints the "say" line itself (or a better one: a
// limit hit), so the init does not: one fact, one line. Without a
// listener the init prints its line as ever. The control dir is
// mounted read-only, which does not stop a connect; the host
// authenticates the init by its pid (SO_PEERCRED), as the peer, which
// shares the init's ids and sees the control dir, could connect too.
package facts
