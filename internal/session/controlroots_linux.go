//go:build linux

package session

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// maxProcScan bounds the /proc entries OtherControlRoots reads.
const maxProcScan = 1 << 16

// pfKthread is the kernel's PF_KTHREAD task flag (field 9 of
// /proc/PID/stat).
const pfKthread = 0x00200000

// OtherControlRoots lists the control roots of other sessions on this
// host that exist now, but own (and any root that holds own): those of
// the running ones, read from /proc (a namespace session's stage and
// init keep their control dir as the last argument; a supervisor's
// --control-root; its XDG_RUNTIME_DIR where this user may read its
// environment), and the default ones. A backend covers each where the
// peer could see it: a session of the same host uid (user-namespace
// mode) owns every dir of its siblings, so a control root inside its
// writable cwd, under another XDG_RUNTIME_DIR, was listed, read and
// written by it.
func OtherControlRoots(own string) []string { return otherControlRoots(own, "/proc") }

// otherControlRoots is OtherControlRoots with the processes read from
// procfs (a test's fake one).
func otherControlRoots(own, procfs string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(root string) {
		if root == "" || !filepath.IsAbs(root) {
			return
		}
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		} else {
			return // not there: nothing to show
		}
		if seen[root] || root == "/" {
			return
		}
		seen[root] = true
		if root == own || strings.HasPrefix(own+"/", root+"/") {
			return
		}
		if fi, err := os.Stat(root); err == nil && fi.IsDir() {
			out = append(out, root)
		}
	}
	if r, err := filepath.EvalSymlinks(own); err == nil {
		own = r
	}
	add("/run/loki")
	add(DefaultControlRoot())
	proc, err := unix.Open(procfs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return out
	}
	defer unix.Close(proc)
	buf := make([]byte, 0, 4096)
	// Most of a host's processes are kernel threads (62 of 70 on the test
	// VM), with no argv to read: their list is read before /proc, so a
	// pid in it that /proc then lists is the kernel thread or a process
	// born during the scan, which the scan may miss anyway.
	kthreads, buf := kernelThreads(proc, buf)
	dents := make([]byte, 8192)
	for entries := 0; entries < maxProcScan; {
		n, err := unix.Getdents(proc, dents)
		if err != nil || n <= 0 {
			break
		}
		for b := dents[:n]; len(b) >= 19 && entries < maxProcScan; entries++ {
			reclen := int(binary.NativeEndian.Uint16(b[16:]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			name := b[19:reclen]
			b = b[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			pid, ok := pidName(name)
			if !ok {
				continue
			}
			if _, kt := slices.BinarySearch(kthreads, pid); kt {
				continue
			}
			buf = scanProcess(proc, string(name), buf, add)
		}
	}
	return out
}

// scanProcess adds what one process's argv and environment name as a
// control root, reading /proc/PID into buf (returned for reuse).
func scanProcess(proc int, pid string, buf []byte, add func(string)) []byte {
	if buf = readProcAt(proc, pid+"/cmdline", buf); len(buf) == 0 {
		return buf // a kernel thread, gone or unreadable
	}
	argv := bytes.TrimRight(buf, "\x00")
	if last := argv[bytes.LastIndexByte(argv, 0)+1:]; bytes.Contains(last, []byte("control")) {
		l := string(last)
		if filepath.Base(l) == "control" && strings.HasPrefix(filepath.Base(filepath.Dir(l)), sessionPrefix) {
			add(filepath.Dir(filepath.Dir(l)))
		}
	}
	// Only a supervisor's argv holds these words (and a stage's or init's
	// control dir): every other process is left without splitting it.
	if !bytes.Contains(argv, []byte("loki-supervise")) && !bytes.Contains(argv, []byte("session")) {
		return buf
	}
	args := strings.Split(string(argv), "\x00")
	if !slices.ContainsFunc(args, func(a string) bool { return filepath.Base(a) == "loki-supervise" || a == "session" }) {
		return buf
	}
	for j, a := range args {
		if v, ok := strings.CutPrefix(a, "--control-root="); ok {
			add(v)
		} else if a == "--control-root" && j+1 < len(args) {
			add(args[j+1])
		}
	}
	buf = readProcAt(proc, pid+"/environ", buf)
	for env := buf; len(env) > 0; {
		kv := env
		if i := bytes.IndexByte(env, 0); i >= 0 {
			kv, env = env[:i], env[i+1:]
		} else {
			env = nil
		}
		if v, ok := bytes.CutPrefix(kv, []byte("XDG_RUNTIME_DIR=")); ok {
			add(filepath.Join(string(v), "loki"))
		}
	}
	return buf
}

// kernelThreads lists, sorted, pid 2 and its children when pid 2 is
// kthreadd: the kernel threads, and user-mode helpers the kernel starts
// for root's own settings (a core_pattern pipe), never a process a user
// started (an orphan goes to init or a subreaper). Nil when pid 2 is not
// a kernel thread (in a container's PID namespace it is a user process)
// or its files cannot be read: then every process is read.
func kernelThreads(proc int, buf []byte) ([]int, []byte) {
	if buf = readProcAt(proc, "2/stat", buf); !isKernelThread(buf) {
		return nil, buf
	}
	if buf = readProcAt(proc, "2/task/2/children", buf); len(buf) == 0 {
		return nil, buf
	}
	pids := []int{2}
	for f := range bytes.FieldsSeq(buf) {
		pid, ok := pidName(f)
		if !ok {
			return nil, buf
		}
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	return pids, buf
}

// isKernelThread reports whether a /proc/PID/stat line has PF_KTHREAD
// set; false for a line it cannot parse.
func isKernelThread(stat []byte) bool {
	st, err := procid.ParseStat(stat)
	return err == nil && st.Flags&pfKthread != 0
}

// pidName parses a /proc entry named by a pid.
func pidName(name []byte) (int, bool) {
	if len(name) == 0 || len(name) > 10 {
		return 0, false
	}
	pid := 0
	for _, c := range name {
		if c < '0' || c > '9' {
			return 0, false
		}
		pid = pid*10 + int(c-'0')
	}
	return pid, true
}

// readProcAt reads FILE (relative to the /proc descriptor) whole into
// buf (grown as needed), with bare system calls: os.ReadFile's stat and
// poller registration cost more than the read on a proc file, and this
// runs for every user process of the host. Empty when the process is
// gone or unreadable.
func readProcAt(proc int, file string, buf []byte) []byte {
	fd, err := unix.Openat(proc, file, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return buf[:0]
	}
	defer unix.Close(fd)
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, max(4096, cap(buf)))...)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if n <= 0 {
			if err != nil {
				return buf[:0]
			}
			return buf
		}
		buf = buf[:len(buf)+n]
	}
}
