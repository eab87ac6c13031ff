package seccomp

import "errors"

// ErrUnsupported: no syscall table for this architecture, so no filter.
var ErrUnsupported = errors.New("seccomp: no syscall table for this architecture")

// Name is the policy's name in a backend's declared capabilities and a
// session's status stream.
const Name = "loki-session (docs/confinement.md)"

// Linux's errno values (the same on every architecture loki builds for).
const (
	EPERM           = 1
	ENOSYS          = 38
	ENOPROTOOPT     = 92
	EPROTONOSUPPORT = 93
	EOPNOTSUPP      = 95
)

// Arg is one condition on a syscall argument: (arg & Mask) == Value,
// on the argument's low 32 bits.
type Arg struct {
	Index       uint
	Mask, Value uint32
}

// Rule denies the syscall Name with Errno when all of Args hold (always,
// when there are none). Several rules of one name are alternatives. Why
// says what it keeps the peer from, for --print-policy.
type Rule struct {
	Name  string
	Errno uint
	Args  []Arg
	Why   string
}

// Mode bits and open flags the rules test (the same on every
// architecture here).
const (
	setUID  = 0o4000
	setGID  = 0o2000
	oCreat  = 0o100
	oTmpStr = 0o20000000 // __O_TMPFILE, without O_DIRECTORY
)

// Policy is the session's syscall policy, in the order it is checked.
// docs/confinement.md says why each rule is there.
func Policy() []Rule {
	var rules []Rule
	deny := func(errno uint, why string, names ...string) {
		for _, n := range names {
			rules = append(rules, Rule{Name: n, Errno: errno, Why: why})
		}
	}
	const setID = "S_ISUID or S_ISGID in the mode: no set-uid/set-gid file leaves the session"
	// No set-uid/set-gid file leaves a session: a mode with either bit
	// is refused wherever a mode is set. The argument holding the mode
	// (and the open flags) per call:
	modes := []struct {
		name        string
		mode, flags int // argument index; flags -1: the call always creates
	}{
		{"chmod", 1, -1}, {"fchmod", 1, -1}, {"fchmodat", 2, -1}, {"fchmodat2", 2, -1},
		{"mknod", 1, -1}, {"mknodat", 2, -1}, {"creat", 1, -1},
		{"open", 2, 1}, {"openat", 3, 2},
	}
	for _, m := range modes {
		for _, bit := range []uint32{setUID, setGID} {
			mode := Arg{Index: uint(m.mode), Mask: bit, Value: bit}
			if m.flags < 0 {
				rules = append(rules, Rule{Name: m.name, Errno: EPERM, Args: []Arg{mode}, Why: setID})
				continue
			}
			// open's mode counts only when it creates a file.
			for _, create := range []uint32{oCreat, oTmpStr} {
				flag := Arg{Index: uint(m.flags), Mask: create, Value: create}
				rules = append(rules, Rule{Name: m.name, Errno: EPERM, Args: []Arg{flag, mode}, Why: setID})
			}
		}
	}
	// openat2 passes its mode in a struct a filter cannot read: ENOSYS,
	// so that callers fall back to openat.
	deny(ENOSYS, "its mode is out of a filter's reach (callers fall back to openat)", "openat2")
	// File capabilities are an xattr (security.capability), and a filter
	// cannot read the name: no xattr is set at all. EOPNOTSUPP is what
	// a filesystem without xattrs answers, which cp, tar and Python's
	// shutil pass over.
	deny(EOPNOTSUPP, "no xattr at all, so no file capability (security.capability)", "setxattr", "lsetxattr", "fsetxattr", "setxattrat")
	// Kernel surface Docker's default profile denies to a container: the
	// keyrings (not namespaced), io_uring (which would also bypass every
	// rule above), userfaultfd, perf events, eBPF.
	deny(EPERM, "the kernel's keyrings are not namespaced", "add_key", "request_key", "keyctl")
	deny(EPERM, "kernel surface Docker's default profile denies", "io_uring_setup", "io_uring_enter",
		"io_uring_register", "userfaultfd", "perf_event_open", "bpf")
	return rules
}

// Denial is one line of Summary: calls denied with one errno, for one
// reason.
type Denial struct {
	Calls []string `json:"calls"`
	Errno string   `json:"errno"`
	Why   string   `json:"why"`
}

// errnoNames name the errnos Policy uses.
var errnoNames = map[uint]string{EPERM: "EPERM", ENOSYS: "ENOSYS", EOPNOTSUPP: "EOPNOTSUPP"}

// Summary is Policy for a person: consecutive rules of one reason on
// one line, each call named once.
func Summary() []Denial {
	var out []Denial
	for _, r := range Policy() {
		if n := len(out); n == 0 || out[n-1].Why != r.Why {
			out = append(out, Denial{Errno: errnoNames[r.Errno], Why: r.Why})
		}
		d := &out[len(out)-1]
		if k := len(d.Calls); k == 0 || d.Calls[k-1] != r.Name {
			d.Calls = append(d.Calls, r.Name)
		}
	}
	return out
}

// RunnerPolicy is the confined build runner's filter (a durable run under
// LOKI_HOST_LANDLOCK=1, applied by execution/sandbox/harden beside its
// Landlock ruleset), for what Landlock does not see. docs/executions.md
// says why each rule is there.
func RunnerPolicy() []Rule {
	const (
		ipprotoMPTCP     = 262
		solIP            = 0
		ipLocalPortRange = 51 // Linux 6.3
		all              = 0xffffffff
	)
	return []Rule{
		// clone3 can name a cgroup (CLONE_INTO_CGROUP) in a struct a
		// filter cannot read: ENOSYS, so libc falls back to clone, which
		// cannot (Docker's answer too).
		{Name: "clone3", Errno: ENOSYS},
		// io_uring's operations (sockets included) bypass every rule.
		{Name: "io_uring_setup", Errno: ENOSYS},
		{Name: "io_uring_enter", Errno: ENOSYS},
		{Name: "io_uring_register", Errno: ENOSYS},
		// MPTCP sockets are outside Landlock's TCP port rules: refused
		// as by a kernel without MPTCP, so programs fall back to TCP.
		{Name: "socket", Errno: EPROTONOSUPPORT, Args: []Arg{{Index: 2, Mask: all, Value: ipprotoMPTCP}}},
		// IP_LOCAL_PORT_RANGE would pin bind(0) to a reserved port:
		// refused as by a kernel before 6.3.
		{Name: "setsockopt", Errno: ENOPROTOOPT, Args: []Arg{{Index: 1, Mask: all, Value: solIP}, {Index: 2, Mask: all, Value: ipLocalPortRange}}},
		// i386's socketcall carries socket's arguments in memory a filter
		// cannot read: ENOSYS, so libc uses socket(2) itself.
		{Name: "socketcall", Errno: ENOSYS},
	}
}
