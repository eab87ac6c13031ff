// Package lease decides whether the host is still alive.
//
// The host owns a control directory and keeps replacing the 8-byte file
// "lease" in it (Writer). The init inside the namespace watches that file
// (Watcher) and counts a renewal only when a read yields exactly 8 bytes that
// differ from the last accepted value. Anything else (missing, unreadable,
// short, long, not a regular file) is no evidence: it never renews and never
// fails the watcher. A Watcher that has seen no renewal for its duration
// reports ErrExpired, and that decision is final.
//
// The control directory must be exposed to the namespace as a directory
// mount: Writer replaces the file by rename, and a bind mount of the file
// itself would pin the old inode.
package lease
