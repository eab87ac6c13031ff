//go:build unix

// Package safefile holds the files the supervisor writes and reads safely:
// atomic replace with fsync, and opens that refuse what an untrusted agent
// may have planted at a name. It is a leaf: it imports nothing of loki, so
// any layer may use it without an import running back up the layers.
//
// Guarantees:
//   - WriteAtomic and Replace never let a reader see a prefix: a reader
//     sees the old content or all of the new, and the rename is made
//     durable with an fsync of the file and of its directory.
//   - Open never follows a final symlink and never blocks on a FIFO or
//     device, so a hostile work tree cannot redirect a read outside itself
//     or hang the reader; OpenRegular also keeps nothing but a regular
//     file.
package safefile
