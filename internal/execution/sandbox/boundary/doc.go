// Package boundary reads and validates the host boundary of a confined
// local build: which directories a build may read, write and execute from,
// which directory it must never touch, and which TCP ports it may not use.
//
// Guarantees:
//   - A Boundary exists only after every rule has passed; its paths are
//     absolute, free of symlinks (resolved against the real filesystem), never
//     the filesystem root, and de-duplicated in first-seen order, so that a
//     profile built from it is reproducible byte for byte.
//   - Every rejection is an *Error that wraps ErrInvalid and names the
//     variable (or argument) at fault together with the reason.
//   - Identity hashes exactly the bytes the reference supervisor hashes, so a
//     config_sha256 recorded by either implementation matches the other.
//
// The rules follow the reference supervisor (build_supervisor.py) including
// the corner cases of Python's pathlib (expanduser, strict resolve, str.strip)
// because the same environment must yield the same boundary in both.
package boundary
