// Package tty holds the end-to-end tests of `loki-supervise session -t`:
// real terminals (a tmux server of each test's own, driven by send-keys
// and read by capture-pane), the real binaries, real namespaces, crun, runc
// and docker.
// They check what a person at the terminal sees: the peer is on a pty of
// its own with job control, keys become signals, the window size follows
// the pane, curses programs draw, exit codes and the lease hold as without
// a terminal, and the host terminal is left as it was found on every way
// out. Every wait is bounded; each test kills only its own tmux server and
// the processes it identified under it.
package tty
