//go:build unix

// Package treedigest computes the manifest-v3 digest of a git work tree: a
// SHA-256 over the canonical JSON (package canonjson) of one entry per path
// in the git index or on disk, so that a receipt written by the reference
// tools can be compared with the tree the supervisor actually got back.
//
// Guarantees:
//
//   - the digest is a pure function of the index and the bytes, modes, link
//     targets and names on disk; file names are raw bytes, written as Python
//     writes surrogate-escaped names, and entries are sorted as Python sorts
//     str values;
//   - the walk never follows a symbolic link: not a directory link, not an
//     intermediate component of an index path (git itself treats a path
//     beyond a symlink as absent, and so does the digest), not the final
//     component (files are opened with O_NOFOLLOW);
//   - files are streamed through a fixed-size buffer by a bounded pool of
//     workers: memory does not grow with file size;
//   - git runs as a subprocess with a timeout, a cleaned environment and the
//     file-system monitor hook turned off, so a hostile repository config
//     cannot make the digest run a program;
//   - a root that is not the top of a git work tree has the digest "" (and
//     Manifest returns ErrNotWorkTree); any other failure is an error, never
//     a partial digest.
package treedigest
