//go:build linux

package session

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// maxProcScan bounds the processes OtherControlRoots reads.
const maxProcScan = 1 << 16

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
func OtherControlRoots(own string) []string {
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
	proc, err := os.Open("/proc")
	if err != nil {
		return out
	}
	names, _ := proc.Readdirnames(maxProcScan)
	proc.Close()
	var buf []byte
	for _, pid := range names {
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		if buf = readProc(pid, "cmdline", buf); len(buf) == 0 {
			continue
		}
		argv := strings.Split(string(bytes.TrimRight(buf, "\x00")), "\x00")
		if last := argv[len(argv)-1]; filepath.Base(last) == "control" && strings.HasPrefix(filepath.Base(filepath.Dir(last)), sessionPrefix) {
			add(filepath.Dir(filepath.Dir(last)))
		}
		if !slices.ContainsFunc(argv, func(a string) bool { return filepath.Base(a) == "loki-supervise" || a == "session" }) {
			continue
		}
		for j, a := range argv {
			if v, ok := strings.CutPrefix(a, "--control-root="); ok {
				add(v)
			} else if a == "--control-root" && j+1 < len(argv) {
				add(argv[j+1])
			}
		}
		buf = readProc(pid, "environ", buf)
		for _, kv := range strings.Split(string(buf), "\x00") {
			if v, ok := strings.CutPrefix(kv, "XDG_RUNTIME_DIR="); ok {
				add(filepath.Join(v, "loki"))
			}
		}
	}
	return out
}

// readProc reads /proc/PID/FILE whole into buf (grown as needed),
// with bare system calls: os.ReadFile's stat and poller registration
// cost more than the read on a proc file, and this runs for every
// process of the host. Empty when the process is gone or unreadable.
func readProc(pid, file string, buf []byte) []byte {
	fd, err := unix.Open("/proc/"+pid+"/"+file, unix.O_RDONLY|unix.O_CLOEXEC, 0)
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
