package confine

// MaskedPaths are hidden from the peer: an empty read-only view for a
// directory, /dev/null for a file. The list is the one runc's and
// Docker's default configs use: kernel memory, keyrings, timers and
// hardware interfaces a container has no business reading.
var MaskedPaths = []string{
	"/proc/acpi", "/proc/asound", "/proc/interrupts", "/proc/kcore", "/proc/keys",
	"/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
	"/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
}

// ReadonlyPaths are made read-only for the peer (in addition to /sys as a
// whole, which every backend mounts read-only): writes there reconfigure
// the host's kernel (core_pattern runs a program as full root).
var ReadonlyPaths = []string{
	"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
}
