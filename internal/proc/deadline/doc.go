// Package deadline runs one command under a hard and an optional idle
// deadline and guarantees that nothing it started outlives it.
//
// Guarantees:
//
//   - The command is started through lineage (session leader, exec gate,
//     tracked descendants) and its stdout/stderr are relayed through pipes,
//     so idle time is measured from the last byte of output.
//   - On expiry exactly one JSON line is written to stderr,
//     {"type":"loki_provider_deadline","reason":...,"hard_seconds":H,"idle_seconds":I},
//     never interleaved inside a relayed line; then the whole lineage is
//     stopped with the grace, remaining output is drained, and the exit code
//     is 124.
//   - Exit codes: the command's own code; 128+N when it died of signal N or
//     when this process got SIGTERM/SIGINT/SIGHUP (the lineage is stopped
//     first); 141 when output could not be written (broken pipe); 125 when
//     the command exited but left descendants (they are stopped), when
//     tracking failed, or on any internal failure; 127/126 when the command
//     could not be executed.
//   - With LOKI_DEADLINE_CONTROL_FILE set, a control file naming this
//     process by identity is created exclusively (0600, no symlink followed)
//     and removed at exit only if it is still the file written. Cancel signals
//     only a process proven by such a file: regular, 0600, owned by the
//     caller, one link, at most 1 KiB, exactly the three keys, identity
//     matching the live process.
package deadline
