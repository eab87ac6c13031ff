// Package mounts is what the isolation backends share about the host
// paths a peer is shown: --bind parsing (oci, docker), the views of the
// control root that must be masked (oci, docker), and whether a path
// lies under a directory (every backend, and the namespace stage inside
// loki-init, so it imports nothing of this module). Its guarantee: a
// view that would show the control root, which holds every session's
// lease, is either listed for masking or refused.
package mounts
