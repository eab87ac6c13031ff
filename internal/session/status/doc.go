// Package status is a session's status stream: JSON lines, one object
// each, with "event" and a monotonic "t" (seconds since the session's
// start), written to a descriptor the caller passed (--status-fd) or
// appended to a file (--status-file). Events: start (the session, its
// backend and effective policy, and what this backend and host can
// observe), refused (what the sandbox refused, aggregated by key), end
// (the code and the one reason the session ended, durations, bytes,
// refusal counts, lines dropped). The schema is docs/status.md and
// docs/status.schema.json.
//
// What it guarantees:
//   - It never blocks or fails the session: lines go through a bounded
//     queue to a writer of their own; a slow or closed reader loses lines,
//     never time, and the count of lines lost is in end.
//   - Memory is bounded whatever the peer does: refusals are counted in a
//     table of at most MaxKeys keys (a first refused event per key; the
//     counts of repeats, and of keys beyond the table, come before end).
//   - A file is opened 0600 for append, every line is written with one
//     write(2) as it comes (a crash keeps what was written), and it is
//     fsynced at the end.
//   - Every line is valid JSON of the documented schema (fuzzed), on one
//     line, whatever bytes a path or command name holds.
package status
