//go:build unix

// Package state owns the durable record of one execution (architecture.md,
// Contract 4): $LOKI_DATA_DIR/dashboard/builds/<uuid>/ with state.json,
// runner.log, spec.md and proof.json.
//
// Guarantees:
//   - An execution id is a canonical, lower-case UUID (ID can only be made
//     by ParseID), so an id can never name a path outside the root.
//   - Every read-modify-write of state.json holds an exclusive flock on
//     .lock in the execution directory, across processes; concurrent
//     Updates never lose a field.
//   - Every write is atomic (temp file in the same directory, fsync,
//     rename, fsync of the directory): a reader, or a process killed in the
//     middle of a write, never sees torn or partial JSON.
//   - Directories are 0700, files 0600 (the proof snapshot 0400), the log is
//     append-only.
//   - Update merges fields like Python's dict.update: keys it does not name,
//     including ones this version does not know, are kept.
//   - state.json is encoded exactly like the reference (sorted keys, indent
//     2, ASCII-only, trailing newline) because a dashboard reads it.
//
// Readers never write: fields derived at read time (is the supervisor
// still alive?) are computed by callers and never stored.
package state
