// Package sockdiag lists the unix sockets bound to a path in the
// caller's network namespace, as the kernel's sock_diag reports them
// (what `ss -x` shows; no privilege needed).
//
// Guarantee: a path is returned only if, when it was checked, the file
// at that path was the socket the kernel listed (same inode and
// device): a socket bound in another mount namespace, by a relative
// path, or unlinked since is left out, never guessed at. Every socket
// of every state is listed (a datagram socket takes messages without
// listening).
package sockdiag
