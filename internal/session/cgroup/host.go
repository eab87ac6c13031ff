package cgroup

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"

	"github.com/loki-sh/loki/internal/session/isolation/mounts"
)

// Sentinel errors.
var (
	// ErrUnavailable: the host has no cgroup (or controller) the session
	// can be given, or it is not writable here.
	ErrUnavailable = errors.New("cgroup limits not available")
)

// Host is where this process's cgroups are.
type Host struct {
	// UnifiedMount is the cgroup2 mount point ("" when none), Unified the
	// dir of this process's cgroup in it.
	UnifiedMount, Unified string
	// V1 maps each cgroup v1 controller (pids, memory, cpu, ...) to the
	// dir of this process's cgroup in that controller's hierarchy.
	V1 map[string]string
}

// Version is "v2" (unified), "hybrid" (v1 controllers and a cgroup2
// mount without them), "v1", or "none".
func (h Host) Version() string {
	switch {
	case len(h.V1) > 0 && h.UnifiedMount != "":
		return "hybrid"
	case len(h.V1) > 0:
		return "v1"
	case h.UnifiedMount != "":
		return "v2"
	}
	return "none"
}

// UsesV1 reports whether limits go to the v1 hierarchies: whenever one
// of the controllers a session uses is mounted there (it is then
// unavailable to v2).
func (h Host) UsesV1() bool {
	for _, c := range controllers {
		if _, ok := h.V1[c]; ok {
			return true
		}
	}
	return false
}

// controllers are those a session's limits use.
var controllers = []string{"pids", "memory", "cpu"}

type mount struct {
	point, root, fstype string
	opts                []string
}

// parseHost builds the Host from /proc/self/mountinfo and
// /proc/self/cgroup.
func parseHost(mountinfo, self []byte) Host {
	var mounts []mount
	// Line by line over the bytes read, with no scanner's buffer (64 KiB
	// of fresh heap), and the fields of cgroup mounts only.
	for line := range bytes.Lines(mountinfo) {
		// ID PARENT MAJ:MIN ROOT POINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS
		pre, post, ok := bytes.Cut(line, []byte(" - "))
		if !ok || !bytes.HasPrefix(post, []byte("cgroup")) {
			continue
		}
		f, g := strings.Fields(string(pre)), strings.Fields(string(post))
		if len(f) < 5 || len(g) < 3 || (g[0] != "cgroup" && g[0] != "cgroup2") {
			continue
		}
		mounts = append(mounts, mount{point: unescape(f[4]), root: unescape(f[3]), fstype: g[0], opts: strings.Split(g[2], ",")})
	}
	h := Host{V1: map[string]string{}}
	for line := range strings.Lines(string(self)) {
		// ID:CONTROLLERS:PATH; v2 is 0::PATH.
		parts := strings.SplitN(strings.TrimSuffix(line, "\n"), ":", 3)
		if len(parts) != 3 {
			continue
		}
		path := parts[2]
		if parts[1] == "" {
			for _, m := range mounts {
				if m.fstype == "cgroup2" {
					if d, ok := within(m, path); ok {
						h.UnifiedMount, h.Unified = m.point, d
						break
					}
				}
			}
			continue
		}
		for _, ctrl := range strings.Split(parts[1], ",") {
			for _, m := range mounts {
				if m.fstype == "cgroup" && hasOpt(m.opts, ctrl) {
					if d, ok := within(m, path); ok {
						h.V1[ctrl] = d
						break
					}
				}
			}
		}
	}
	return h
}

// within maps a cgroup path to its dir under mount m: the path is seen
// relative to the mount's root (a container's cgroup namespace).
func within(m mount, path string) (string, bool) {
	rel := path
	if m.root != "/" {
		if !mounts.Under(path, m.root) {
			return "", false
		}
		rel = strings.TrimPrefix(path, m.root)
	}
	return filepath.Join(m.point, rel), true
}

func hasOpt(opts []string, o string) bool {
	for _, x := range opts {
		if x == o {
			return true
		}
	}
	return false
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n := (int(s[i+1]-'0') << 6) | (int(s[i+2]-'0') << 3) | int(s[i+3]-'0'); n < 256 {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Name is the cgroup name of the session whose scratch dir is scratch:
// "loki-" and the session dir's name, so a stale one is found from it.
func Name(scratch string) string { return "loki-" + filepath.Base(filepath.Dir(scratch)) }

// parseKeyed reads "key value" lines (memory.events, pids.events,
// memory.oom_control) and returns the value of key, 0 when absent.
func parseKeyed(b []byte, key string) int64 {
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && k == key {
			var n int64
			for _, c := range strings.TrimSpace(v) {
				if c < '0' || c > '9' {
					return n
				}
				n = n*10 + int64(c-'0')
			}
			return n
		}
	}
	return 0
}
