//go:build unix

package procid

// Status is what the OS says about a live process.
type Status struct {
	State byte // single-letter state, e.g. 'R', 'S', 'Z'
	PPID  int
	PGID  int
	SID   int
	// Start is the raw start time: clock ticks since boot on Linux,
	// microseconds since the epoch on macOS.
	Start uint64
	// Flags is the kernel's per-task flags word (PF_*) on Linux, 0
	// elsewhere.
	Flags uint64
}
