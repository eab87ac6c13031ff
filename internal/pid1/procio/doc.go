// Package procio reads the I/O counters of a /proc io file
// (/proc/PID/io, /proc/PID/task/TID/io). It is a leaf, so that loki-init
// (which may link only internal/pid1 and its subpackages besides the
// protocol packages) and the supervisor's backends read the counters
// with one parser.
package procio
