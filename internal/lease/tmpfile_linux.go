package lease

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// writeUnnamed writes a value that must be on disk before it is renamed
// (fsynced, mode as fillTemp sets it) into an O_TMPFILE of dir, and only
// then links it under a fresh temp name. Its fsync then finds no new
// directory entry: ext4 without a journal (the test VMs' /run) flushes
// every new entry's dir and that dir's parents one synchronous write at a
// time, several times the file's own data and inode. ok is false where
// the file system or the kernel has no O_TMPFILE, or no way to link it
// here: the caller then writes a named temp file as before.
func writeUnnamed(dir string, value []byte, group int) (name string, ok bool, err error) {
	fd, oerr := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if oerr != nil {
		return "", false, nil
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	if err := fillTemp(f, value, true, group); err != nil {
		return "", true, err
	}
	for range 100 {
		var r [4]byte
		if err := randomSeed(r[:]); err != nil {
			return "", true, err
		}
		name = filepath.Join(dir, ".lease-"+strconv.FormatUint(uint64(binary.BigEndian.Uint32(r[:])), 10))
		// AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH before Linux 6.10;
		// the /proc link works for the file's owner wherever procfs is.
		lerr := unix.Linkat(fd, "", unix.AT_FDCWD, name, unix.AT_EMPTY_PATH)
		if lerr != nil && !errors.Is(lerr, unix.EEXIST) {
			lerr = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
		}
		switch {
		case lerr == nil:
			return name, true, nil
		case !errors.Is(lerr, unix.EEXIST):
			return "", false, nil
		}
	}
	return "", false, nil
}
