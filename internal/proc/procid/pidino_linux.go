package procid

import "golang.org/x/sys/unix"

// pidInode returns the pidfs inode number of pid's process, or 0 when it
// cannot be had (process gone, kernel without pidfd_open). Before pidfs
// (Linux 6.9) every pidfd shares one anonymous inode, so the number is the
// same for all processes: comparing it then neither helps nor refuses.
func pidInode(pid int) uint64 {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return 0
	}
	return st.Ino
}
