//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The syscall policy's attacks (docs/confinement.md, "The syscall
// policy"), one "name=RESULT" line each, RESULT "ok" or the errno's name:
// plant tries to leave a set-uid/set-gid file or a file capability in
// dir every way the policy covers, surface tries the kernel surface it
// denies.

func say(name string, err error) { fmt.Printf("%s=%s\n", name, result(err)) }

func raw(nr uintptr, a ...uintptr) (uintptr, error) {
	a = append(a, 0, 0, 0, 0, 0, 0)
	r, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	if e != 0 {
		return r, e
	}
	return r, nil
}

func cstr(s string) uintptr {
	p, _ := unix.BytePtrFromString(s)
	return uintptr(unsafe.Pointer(p))
}

// plain makes an ordinary 0755 file to be chmod'ed.
func plain(dir, name string) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\nid\n"), 0o755); err != nil {
		fmt.Printf("setup=%v\n", err)
	}
	return p
}

func plant(dir string) {
	cwd := unix.AT_FDCWD
	at := uintptr(cwd)
	say("chmod", unix.Chmod(plain(dir, "chmod"), 0o6755))
	f := plain(dir, "fchmod")
	if fd, err := unix.Open(f, unix.O_RDONLY, 0); err == nil {
		say("fchmod", unix.Fchmod(fd, 0o4755))
		unix.Close(fd)
	}
	_, err := raw(unix.SYS_FCHMODAT, at, cstr(plain(dir, "fchmodat")), 0o2755)
	say("fchmodat", err)
	_, err = raw(unix.SYS_FCHMODAT2, at, cstr(plain(dir, "fchmodat2")), 0o4755, 0)
	say("fchmodat2", err)
	fd, err := unix.Open(filepath.Join(dir, "open"), unix.O_CREAT|unix.O_WRONLY, 0o4755)
	say("open", err)
	if err == nil {
		unix.Close(fd)
	}
	fd, err = unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY, 0o2755)
	say("tmpfile", err)
	if err == nil {
		unix.Linkat(fd, "", unix.AT_FDCWD, filepath.Join(dir, "tmpfile"), unix.AT_EMPTY_PATH)
		unix.Close(fd)
	}
	say("mknod", unix.Mknod(filepath.Join(dir, "mknod"), unix.S_IFREG|0o4755, 0))
	// A v2 file capability granting cap_setuid, effective.
	capv2 := make([]byte, 20)
	capv2[0], capv2[3] = 0x01, 0x02 // VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE
	capv2[4] = 1 << unix.CAP_SETUID
	say("setcap", unix.Setxattr(plain(dir, "setcap"), "security.capability", capv2, 0))
	say("setxattr", unix.Setxattr(plain(dir, "xattr"), "user.loki", []byte("x"), 0))
	how := unix.OpenHow{Flags: unix.O_CREAT | unix.O_WRONLY, Mode: 0o4755}
	fd, err = unix.Openat2(unix.AT_FDCWD, filepath.Join(dir, "openat2"), &how)
	say("openat2", err)
	if err == nil {
		unix.Close(fd)
	}
	// What must still work: ordinary modes, and a directory made in a
	// set-gid one (it inherits the bit, which grants nothing).
	say("chmod-plain", unix.Chmod(plain(dir, "plain"), 0o750))
	fd, err = unix.Open(filepath.Join(dir, "created"), unix.O_CREAT|unix.O_WRONLY, 0o644)
	say("open-plain", err)
	if err == nil {
		unix.Close(fd)
	}
	if _, err := os.Stat(filepath.Join(dir, "sgid")); err == nil {
		say("mkdir-in-sgid", unix.Mkdir(filepath.Join(dir, "sgid", "sub"), 0o755))
	}
}

func surface() {
	params := make([]byte, 120) // struct io_uring_params
	fd, err := raw(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])))
	say("io_uring_setup", err)
	if err == nil {
		unix.Close(int(fd))
	}
	fd, err = raw(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|1) // UFFD_USER_MODE_ONLY
	say("userfaultfd", err)
	if err == nil {
		unix.Close(int(fd))
	}
	attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK,
		Bits: unix.PerfBitDisabled | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
	attr.Size = uint32(unsafe.Sizeof(attr))
	pfd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	say("perf_event_open", err)
	if err == nil {
		unix.Close(pfd)
	}
}

// deny makes denied calls: keyctl n times, openat2 and setxattr once
// each, and says how each was answered ("keyctl=EPERM:n") and the
// caller's pid as it sees it.
func deny(n int) {
	errs := map[string]int{}
	for range n {
		_, err := raw(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(0xfffffffd), 0)
		errs[result(err)]++
	}
	for e, k := range errs {
		fmt.Printf("keyctl=%s:%d\n", e, k)
	}
	how := unix.OpenHow{Flags: unix.O_RDONLY}
	_, err := unix.Openat2(unix.AT_FDCWD, "/", &how)
	say("openat2", err)
	say("setxattr", unix.Setxattr("/", "user.loki", []byte("x"), 0))
	fmt.Printf("pid=%d\n", os.Getpid())
}

// denyWatch calls keyctl every 10 ms for a minute, saying how it was
// answered at the start and at each change.
func denyWatch() {
	last := ""
	for range 6000 {
		_, err := raw(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(0xfffffffd), 0)
		if r := result(err); r != last {
			fmt.Printf("keyctl=%s\n", r)
			last = r
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func result(err error) string {
	if errno, ok := err.(unix.Errno); ok {
		return unix.ErrnoName(errno)
	}
	if err != nil {
		return err.Error()
	}
	return "ok"
}
