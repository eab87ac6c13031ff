//go:build linux

package seccomp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// absent are the policy's syscalls an ABI may lack (arm64 has only the
// *at forms).
var absent = map[string]bool{"chmod": true, "mknod": true, "creat": true, "open": true, "socketcall": true}

func TestEveryRuleHasANumber(t *testing.T) {
	if len(abis) == 0 {
		t.Skip("no syscall table for this architecture")
	}
	for _, a := range abis {
		for _, r := range append(Policy(), RunnerPolicy()...) {
			if _, ok := a.nrs[r.Name]; !ok && !absent[r.Name] {
				t.Errorf("arch %#x: no number for %s", a.arch, r.Name)
			}
		}
		for name := range a.nrs {
			found := false
			for _, r := range append(Policy(), RunnerPolicy()...) {
				found = found || r.Name == name
			}
			if !found {
				t.Errorf("arch %#x: %s has a number but no rule", a.arch, name)
			}
		}
	}
}

// probeEnv makes the test binary the probe: it installs the filter on
// itself and reports each call's errno, one "name=ERRNO" per line.
const probeEnv = "LOKI_SECCOMP_TEST_PROBE"

func TestMain(m *testing.M) {
	if dir := os.Getenv(probeEnv); dir != "" {
		probe(dir)
		return
	}
	os.Exit(m.Run())
}

func probe(dir string) {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		panic(err)
	}
	if err := Install(); err != nil {
		panic(err)
	}
	f := filepath.Join(dir, "f")
	say := func(name string, err error) {
		e := "ok"
		if errno, ok := err.(unix.Errno); ok {
			e = unix.ErrnoName(errno)
		} else if err != nil {
			e = err.Error()
		}
		os.Stdout.WriteString(name + "=" + e + "\n")
	}
	raw := func(nr uintptr, a ...uintptr) error {
		a = append(a, 0, 0, 0, 0, 0, 0)
		_, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
		if e != 0 {
			return e
		}
		return nil
	}
	cwd := unix.AT_FDCWD
	atCWD := uintptr(cwd)
	path := func(s string) uintptr { p, _ := unix.BytePtrFromString(s); return uintptr(unsafe.Pointer(p)) }
	fd, err := unix.Open(f, unix.O_CREAT|unix.O_WRONLY, 0o755)
	say("create", err)
	say("chmod", unix.Chmod(f, 0o755))
	say("chmod-suid", unix.Chmod(f, 0o4755))
	say("chmod-sgid", unix.Fchmodat(unix.AT_FDCWD, f, 0o2755, 0))
	say("fchmod-suid", unix.Fchmod(fd, 0o4755))
	say("fchmodat2-suid", raw(unix.SYS_FCHMODAT2, atCWD, path(f), 0o6755, 0))
	say("chmod-high", raw(unix.SYS_FCHMODAT, atCWD, path(f), 1<<32|0o755))
	say("chmod-high-suid", raw(unix.SYS_FCHMODAT, atCWD, path(f), 1<<32|0o4755))
	_, err = unix.Open(filepath.Join(dir, "o"), unix.O_CREAT|unix.O_WRONLY, 0o4755)
	say("open-suid", err)
	_, err = unix.Open(filepath.Join(dir, "o2"), unix.O_WRONLY, 0o4755)
	say("open-nocreat", err) // no O_CREAT: the mode is not looked at (ENOENT)
	_, err = unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY, 0o2755)
	say("tmpfile-sgid", err)
	say("mknod-suid", unix.Mknod(filepath.Join(dir, "m"), unix.S_IFREG|0o4755, 0))
	say("mknod", unix.Mknod(filepath.Join(dir, "m2"), unix.S_IFREG|0o644, 0))
	say("setxattr", unix.Setxattr(f, "user.loki", []byte("x"), 0))
	how := unix.OpenHow{Flags: unix.O_RDONLY}
	_, err = unix.Openat2(unix.AT_FDCWD, f, &how)
	say("openat2", err)
	say("io_uring_setup", raw(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&[120]byte{}))))
	say("userfaultfd", raw(unix.SYS_USERFAULTFD, 1)) // UFFD_USER_MODE_ONLY
	say("keyctl", raw(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(0xfffffffd), 0))
}

func TestInstalledPolicy(t *testing.T) {
	if len(abis) == 0 {
		t.Skip("no syscall table for this architecture")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), probeEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v: %s", err, out)
	}
	got := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			got[k] = v
		}
	}
	want := map[string]string{
		"create": "ok", "chmod": "ok", "chmod-suid": "EPERM", "chmod-sgid": "EPERM",
		"fchmod-suid": "EPERM", "fchmodat2-suid": "EPERM", "chmod-high": "ok", "chmod-high-suid": "EPERM",
		"open-suid": "EPERM", "open-nocreat": "ENOENT", "tmpfile-sgid": "EPERM",
		"mknod-suid": "EPERM", "mknod": "ok", "setxattr": "ENOTSUP", "openat2": "ENOSYS",
		"io_uring_setup": "EPERM", "userfaultfd": "EPERM", "keyctl": "EPERM",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	// Nothing set-uid was made.
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			t.Errorf("%s is %v", p, fi.Mode())
		}
		return nil
	})
}

// BenchmarkProgram is the compile Install does at every session start.
func BenchmarkProgram(b *testing.B) {
	for b.Loop() {
		if _, err := Program(Policy()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSummary: every rule is in one line of the summary, with its errno.
func TestSummary(t *testing.T) {
	in := map[string]string{}
	for _, d := range Summary() {
		if d.Errno == "" || d.Why == "" || len(d.Calls) == 0 {
			t.Errorf("line %+v", d)
		}
		for _, c := range d.Calls {
			in[c+" "+d.Errno] = d.Why
		}
	}
	for _, r := range Policy() {
		if in[r.Name+" "+errnoNames[r.Errno]] != r.Why {
			t.Errorf("%s (%d, %q) not in the summary", r.Name, r.Errno, r.Why)
		}
	}
}

// TestMatcher: a listener's answer is the filter's: every rule matches
// with arguments that meet its conditions, with its errno, and a call
// the filter lets run (open without O_CREAT, chmod without the set-id
// bits) matches nothing.
func TestMatcher(t *testing.T) {
	m := NewMatcher()
	for _, a := range abis {
		for _, r := range Policy() {
			nr, ok := a.nrs[r.Name]
			if !ok {
				continue
			}
			var args [6]uint64
			for _, c := range r.Args {
				args[c.Index] |= uint64(c.Value) | 1<<40 // high bits ignored
			}
			got, ok := m.Match(a.arch, nr, args)
			if !ok || got.Errno != r.Errno || got.Name != r.Name {
				t.Errorf("arch %#x %s %v: matched %+v (%v)", a.arch, r.Name, args, got, ok)
			}
		}
		if r, ok := m.Match(a.arch, a.nrs["openat"], [6]uint64{0, 0, 0, 0o4755}); ok {
			t.Errorf("openat without O_CREAT matched %+v", r)
		}
		if r, ok := m.Match(a.arch, a.nrs["fchmodat"], [6]uint64{0, 0, 0o755}); ok {
			t.Errorf("fchmodat 0755 matched %+v", r)
		}
	}
}
