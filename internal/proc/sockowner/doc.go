// Package sockowner names the process behind a TCP connection made
// inside another network namespace, so a refusal the supervisor answers
// can say who asked.
//
// Guarantees:
//   - only processes in the network namespace of the anchor pid are
//     considered, so a host process with the same address pair in
//     another namespace is never named;
//   - the answer is a hint for a report, never an identity to act on: a
//     socket can be shared by several processes (the one with the lowest
//     pid is named) and a process can exit and its pid be reused before
//     the caller reads it;
//   - one lookup reads /proc once and at most one fd table per process
//     of that namespace; it never blocks on the processes it reads.
package sockowner
