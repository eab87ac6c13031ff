// Package confine holds the end-to-end tests of what a session's peer can
// reach (internal/session/confine): the kernel's control files, its user,
// its network, through the real binaries on every Linux backend, as root
// and, where the backend supports it, as an unprivileged user (the
// namespace backend's user-namespace path). Each test bounds its waits and
// starts nothing it does not end.
package confine
