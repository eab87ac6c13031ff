//go:build linux

package seccomp

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// abi is one syscall ABI a process of this architecture can use, with the
// numbers of the policy's syscalls in it (a name it lacks is no syscall
// there).
type abi struct {
	arch uint32
	x32  bool // numbers from 0x40000000 are x32's, refused whole
	nrs  map[string]uint32
}

const (
	ldW   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	and   = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	ja    = unix.BPF_JMP | unix.BPF_JA
	ret   = unix.BPF_RET | unix.BPF_K
	allow = unix.SECCOMP_RET_ALLOW
	// Offsets in struct seccomp_data; an argument's low word first on
	// these little-endian ABIs.
	offNr, offArch, offArgs = 0, 4, 16
)

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jump(code uint16, k uint32, jt, jf int) unix.SockFilter {
	return unix.SockFilter{Code: code, K: k, Jt: uint8(jt), Jf: uint8(jf)}
}

func deny(errno uint) unix.SockFilter {
	return stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(errno&unix.SECCOMP_RET_DATA))
}

// notify is a rule's denial handed to the listener, which answers with
// the rule's errno (Match); the kernel answers ENOSYS once nobody holds
// the listener.
func notify() unix.SockFilter { return stmt(ret, unix.SECCOMP_RET_USER_NOTIF) }

// Program compiles rules for the ABIs of this architecture: a dispatch
// on the ABI, then for each one a block per syscall, each block skipped
// unless the number matches, so every conditional jump stays short.
func Program(rules []Rule) ([]unix.SockFilter, error) { return program(rules, false) }

// program is Program; with notified, every rule's denial is a user
// notification instead of its errno (the x32 ABI stays refused by the
// filter itself).
func program(rules []Rule, notified bool) ([]unix.SockFilter, error) {
	if len(abis) == 0 {
		return nil, ErrUnsupported
	}
	var sections [][]unix.SockFilter
	for _, a := range abis {
		s, err := section(a, rules, notified)
		if err != nil {
			return nil, err
		}
		sections = append(sections, s)
	}
	// ld arch; per ABI: jeq arch ? next : skip the ja; ja to its
	// section; then allow (an ABI the kernel runs nothing of ours in).
	head := []unix.SockFilter{stmt(ldW, offArch)}
	to := 1 + 2*len(abis) + 1 // first section's index
	for i, a := range abis {
		head = append(head, jump(jeq, a.arch, 0, 1))
		here := len(head)
		head = append(head, stmt(ja, uint32(to-here-1)))
		to += len(sections[i])
	}
	prog := append(head, stmt(ret, allow))
	for _, s := range sections {
		prog = append(prog, s...)
	}
	if len(prog) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp: program of %d instructions", len(prog))
	}
	return prog, nil
}

func section(a abi, rules []Rule, notified bool) ([]unix.SockFilter, error) {
	s := []unix.SockFilter{stmt(ldW, offNr)}
	if a.x32 {
		s = append(s, jump(jge, 0x40000000, 0, 1), deny(EPERM))
	}
	var order []string
	byName := map[string][]Rule{}
	for _, r := range rules {
		if _, ok := byName[r.Name]; !ok {
			order = append(order, r.Name)
		}
		byName[r.Name] = append(byName[r.Name], r)
	}
	for _, name := range order {
		nr, ok := a.nrs[name]
		if !ok {
			continue
		}
		var block []unix.SockFilter
		for _, r := range byName[name] {
			// Each condition: load, mask, and on a mismatch skip to the
			// next alternative (past this one's remaining conditions and
			// its ret).
			n := len(r.Args)
			for i, c := range r.Args {
				if c.Index > 5 {
					return nil, fmt.Errorf("seccomp: %s: no argument %d", name, c.Index)
				}
				left := 3*(n-i-1) + 1 // instructions after this jeq up to and with the ret
				block = append(block,
					stmt(ldW, uint32(offArgs+8*c.Index)),
					stmt(and, c.Mask),
					jump(jeq, c.Value, 0, left))
			}
			if notified {
				block = append(block, notify())
			} else {
				block = append(block, deny(r.Errno))
			}
		}
		block = append(block, stmt(ret, allow))
		if len(block) > 255 {
			return nil, fmt.Errorf("seccomp: %s: block of %d instructions", name, len(block))
		}
		// The accumulator holds the number again at the next jeq: a
		// block is entered only to end in a ret.
		s = append(s, jump(jeq, nr, 0, len(block)))
		s = append(s, block...)
	}
	return append(s, stmt(ret, allow)), nil
}

// Install puts Policy on every thread of the process (TSYNC: all or
// none), inherited by everything it starts. It needs no_new_privs (or
// CAP_SYS_ADMIN).
func Install() error { return InstallRules(Policy()) }

// InstallRules is Install with another rule list (the confined build
// runner's, execution/sandbox/harden): one compiler for every filter.
func InstallRules(rules []Rule) error {
	prog, err := Program(rules)
	if err != nil {
		return err
	}
	r, err := install(prog, unix.SECCOMP_FILTER_FLAG_TSYNC)
	if err == nil && r != 0 {
		return fmt.Errorf("seccomp filter: thread %d could not take it", r)
	}
	return err
}

// InstallNotified is Install with every denial handed to a listener: it
// returns the listener's descriptor (close-on-exec), whose holder must
// answer each notification with the rule's errno (Match, never letting
// the call run). Whoever holds it can answer for the filter, so it must
// never reach the peer. Once no process holds it, the kernel refuses
// the calls with ENOSYS. It fails, and installs nothing, where the
// kernel has no listener with TSYNC (before Linux 5.7: EINVAL) or the
// process already has a filter with one (EBUSY, a runtime's above us):
// the caller then installs the plain policy.
func InstallNotified() (int, error) {
	prog, err := program(Policy(), true)
	if err != nil {
		return -1, err
	}
	// TSYNC_ESRCH: a sync failure is ESRCH, since the return value is
	// the listener. WAIT_KILLABLE_RECV (Linux 5.19): once the listener
	// has the call, only a fatal signal ends the wait, so an answered
	// call is never restarted (a Go peer's preemption signals did, and
	// one call was then answered, and counted, twice); older kernels
	// get the listener without it.
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH)
	fd, err := install(prog, flags|unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
	if errors.Is(err, unix.EINVAL) {
		fd, err = install(prog, flags)
	}
	return int(fd), err
}

func install(prog []unix.SockFilter, flags uintptr) (uintptr, error) {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	if e != 0 {
		return 0, fmt.Errorf("seccomp filter: %w", e)
	}
	return r, nil
}

// Matcher answers, for a call the filter handed to a listener
// (InstallNotified), which rule of Policy it broke: the filter's own
// test, in Go, from the call's ABI, number and arguments.
type Matcher struct {
	rules map[uint64][]Rule // arch<<32 | number
}

// NewMatcher indexes Policy by ABI and number.
func NewMatcher() *Matcher {
	m := &Matcher{rules: map[uint64][]Rule{}}
	for _, a := range abis {
		for _, r := range Policy() {
			if nr, ok := a.nrs[r.Name]; ok {
				k := uint64(a.arch)<<32 | uint64(nr)
				m.rules[k] = append(m.rules[k], r)
			}
		}
	}
	return m
}

// Match returns the first rule that denies the call, its conditions
// tested on the arguments' low 32 bits as the filter does; ok false
// when none does (a listener still refuses it).
func (m *Matcher) Match(arch, nr uint32, args [6]uint64) (Rule, bool) {
next:
	for _, r := range m.rules[uint64(arch)<<32|uint64(nr)] {
		for _, c := range r.Args {
			if uint32(args[c.Index])&c.Mask != c.Value {
				continue next
			}
		}
		return r, true
	}
	return Rule{}, false
}
