// Package hosttool finds the host programs the supervisor itself runs
// (git for the tree digest, gpg for receipt signatures) in fixed system
// directories, never on PATH: the supervisor runs them unconfined after
// the runner ran, and a runner that could plant a `git` in a directory on
// the supervisor's PATH would get it run outside its boundary.
//
// Guarantees: a path returned is an executable regular file in Dirs,
// reached without a symlink in a directory that is writable by nobody but
// root (owner root, no group or other write bit, on the file and every
// directory above it), and it never lies beneath a directory the caller
// declared writable by the runner. Resolve looks once; later calls return
// what the first found, so resolving at start pins the tools before any
// runner exists.
package hosttool
