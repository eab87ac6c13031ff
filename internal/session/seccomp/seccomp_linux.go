//go:build linux

package seccomp

import (
	"errors"
	"fmt"
	"strconv"
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
	jset  = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
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

// Program compiles rules for the ABIs of this architecture: a dispatch
// on the ABI, then for each one a search on the syscall number
// (section).
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

// section is one ABI's part of the program: the syscall number is
// found by a binary search (jge) over the ranges of numbers that share
// one outcome, so a call takes about log2(ranges) jumps, not one per
// rule, and numbers whose rules are alike (chmod, fchmod, mknod, creat)
// share one block; the returns are shared too. The kernel converts,
// JIT-compiles and, for its per-number allow cache, runs the program
// over every number of both ABIs at install: each instruction less is
// start-up time saved. TestProgramDecisions proves every decision equal
// to the plain one-block-per-rule compilation.
func section(a abi, rules []Rule, notified bool) ([]unix.SockFilter, error) {
	// Sized for Policy: a fresh process pays a page fault for each
	// new page a slice grows into.
	b := builder{prog: make([]unix.SockFilter, 0, 64), fix: make([]fixup, 0, 64), at: make([]int, 0, 64)}
	retAllow := b.ret(allow)
	// The rules of each number, in policy order; a number two names
	// share is the first name's.
	var nrs []uint32
	name := make(map[uint32]string, len(a.nrs))
	of := make(map[uint32][]Rule, len(a.nrs))
	for _, r := range rules {
		nr, ok := a.nrs[r.Name]
		if !ok {
			continue
		}
		if n, seen := name[nr]; !seen {
			name[nr] = r.Name
			nrs = append(nrs, nr)
		} else if n != r.Name {
			continue
		}
		of[nr] = append(of[nr], r)
	}
	// An insertion sort: a few dozen numbers, and loki-init links no
	// sort package for them.
	for i := 1; i < len(nrs); i++ {
		for j := i; j > 0 && nrs[j] < nrs[j-1]; j-- {
			nrs[j], nrs[j-1] = nrs[j-1], nrs[j]
		}
	}
	// Ranges of numbers, each with its outcome's label; numbers alike
	// share a block.
	blocks := map[string]label{}
	var segs []segment
	add := func(lo, hi uint32, to label) {
		if n := len(segs); n > 0 && segs[n-1].to == to && segs[n-1].hi+1 == lo {
			segs[n-1].hi = hi
			return
		}
		segs = append(segs, segment{lo, hi, to})
	}
	var pending []func() error
	next := uint32(0)
	for _, nr := range nrs {
		if nr > next {
			add(next, nr-1, retAllow)
		}
		rs := of[nr]
		for _, r := range rs {
			for _, c := range r.Args {
				if c.Index > 5 {
					return nil, fmt.Errorf("seccomp: %s: no argument %d", r.Name, c.Index)
				}
			}
		}
		to, ok := retAllow, false
		if len(rs[0].Args) == 0 {
			to, ok = b.ret(outcome(rs[0], notified)), true
		}
		if !ok {
			k := blockKey(rs, notified)
			if to, ok = blocks[k]; !ok {
				to = b.newLabel()
				blocks[k] = to
				pending = append(pending, func() error { return b.block(to, rs, notified, retAllow) })
			}
		}
		add(nr, nr, to)
		next = nr + 1
	}
	last := uint32(0xffffffff)
	if a.x32 {
		last = 0x3fffffff
	}
	if next <= last {
		add(next, last, retAllow)
	}
	if a.x32 {
		// x32's numbers: refused whole, listener or not.
		add(0x40000000, 0xffffffff, b.ret(unix.SECCOMP_RET_ERRNO|EPERM))
	}
	b.emit(stmt(ldW, offNr))
	b.tree(segs)
	for _, f := range pending {
		if err := f(); err != nil {
			return nil, err
		}
	}
	return b.finish()
}

// outcome is what a rule's denial returns: its errno, or with notified
// the call handed to the listener, which answers with the rule's errno
// (Match; the kernel answers ENOSYS once nobody holds the listener).
func outcome(r Rule, notified bool) uint32 {
	if notified {
		return unix.SECCOMP_RET_USER_NOTIF
	}
	return unix.SECCOMP_RET_ERRNO | uint32(r.Errno&unix.SECCOMP_RET_DATA)
}

// blockKey names what a block of rules decides, so that numbers with
// the same rules share it.
func blockKey(rs []Rule, notified bool) string {
	k := make([]byte, 0, 64)
	for _, r := range rs {
		k = strconv.AppendUint(k, uint64(outcome(r, notified)), 16)
		for _, c := range r.Args {
			k = append(k, ' ')
			k = strconv.AppendUint(k, uint64(c.Index), 10)
			k = append(k, ':')
			k = strconv.AppendUint(k, uint64(c.Mask), 16)
			k = append(k, '=')
			k = strconv.AppendUint(k, uint64(c.Value), 16)
		}
		k = append(k, ';')
	}
	return string(k)
}

// segment: the numbers lo..hi, all decided at label to.
type segment struct {
	lo, hi uint32
	to     label
}

// label is a place in the program, resolved once it is placed.
type label int

// builder assembles a program whose jumps go to labels, all forward;
// returns are shared and placed last.
type builder struct {
	prog  []unix.SockFilter
	at    []int   // label -> instruction index, -1 until placed
	fix   []fixup // jumps to resolve
	rets  []uint32
	retAt []label
}

type fixup struct {
	insn   int
	jt, jf label
	long   bool // a ja: k is the offset
}

func (b *builder) newLabel() label {
	b.at = append(b.at, -1)
	return label(len(b.at) - 1)
}

func (b *builder) place(l label) { b.at[l] = len(b.prog) }

func (b *builder) emit(f unix.SockFilter) { b.prog = append(b.prog, f) }

// jump emits a conditional jump to jt when it holds, jf when not.
func (b *builder) jump(code uint16, k uint32, jt, jf label) {
	b.fix = append(b.fix, fixup{insn: len(b.prog), jt: jt, jf: jf})
	b.emit(stmt(code, k))
}

// ret is the label of the shared return of k.
func (b *builder) ret(k uint32) label {
	for i, r := range b.rets {
		if r == k {
			return b.retAt[i]
		}
	}
	l := b.newLabel()
	b.rets = append(b.rets, k)
	b.retAt = append(b.retAt, l)
	return l
}

// tree emits the binary search over segs (sorted, adjacent, covering
// every number) and returns where it starts.
func (b *builder) tree(segs []segment) label {
	if len(segs) == 1 {
		return segs[0].to
	}
	here := b.newLabel()
	b.place(here)
	mid := len(segs) / 2
	i := len(b.fix)
	b.jump(jge, segs[mid].lo, 0, 0)
	// Set after the calls, which grow b.fix.
	left := b.tree(segs[:mid])
	right := b.tree(segs[mid:])
	b.fix[i].jt, b.fix[i].jf = right, left
	return here
}

// block emits, at l, the test of a number's rules (the alternatives, in
// order; the first whose conditions all hold decides), allow when none.
func (b *builder) block(l label, rs []Rule, notified bool, allowL label) error {
	b.place(l)
	if b.product(rs, notified, allowL) {
		return nil
	}
	for i, r := range rs {
		out := b.ret(outcome(r, notified))
		if len(r.Args) == 0 {
			// Always true: what follows is never reached.
			b.fix = append(b.fix, fixup{insn: len(b.prog), jt: out, long: true})
			b.emit(stmt(ja, 0))
			return nil
		}
		fail := allowL
		if i < len(rs)-1 {
			fail = b.newLabel()
		}
		loaded := -1
		for j, c := range r.Args {
			pass := out
			if j < len(r.Args)-1 {
				pass = b.newLabel()
			}
			if loaded != int(c.Index) {
				b.emit(stmt(ldW, uint32(offArgs+8*c.Index)))
				loaded = int(c.Index)
			}
			switch {
			case c.Mask == c.Value && oneBit(c.Mask):
				b.jump(jset, c.Mask, pass, fail)
			case c.Value == 0: // no bit of the mask set
				b.jump(jset, c.Mask, fail, pass)
			default:
				if c.Mask != 0xffffffff {
					b.emit(stmt(and, c.Mask))
					loaded = -1
				}
				b.jump(jeq, c.Value, pass, fail)
			}
			if pass != out {
				b.place(pass)
			}
		}
		if fail != allowL {
			b.place(fail)
		}
	}
	return nil
}

// product emits, when rs are every combination of one set bit per
// argument, with one outcome (open's O_CREAT or O_TMPFILE with S_ISUID
// or S_ISGID: four rules), their equivalent: each argument has one of
// its bits set. It reports whether rs had that form.
func (b *builder) product(rs []Rule, notified bool, allowL label) bool {
	if len(rs) < 2 || len(rs[0].Args) == 0 {
		return false
	}
	out := outcome(rs[0], notified)
	var idx [6]bool
	var bits [6]uint32
	var seen [][6]uint32
	for _, r := range rs {
		if outcome(r, notified) != out || len(r.Args) != len(rs[0].Args) {
			return false
		}
		var alt [6]uint32
		for i, c := range r.Args {
			if c.Index != rs[0].Args[i].Index || c.Mask != c.Value || !oneBit(c.Mask) || alt[c.Index] != 0 {
				return false
			}
			alt[c.Index] = c.Mask
			idx[c.Index] = true
			bits[c.Index] |= c.Mask
		}
		for _, o := range seen {
			if o == alt {
				return false // twice: not every combination once
			}
		}
		seen = append(seen, alt)
	}
	n := 1
	for i := range bits {
		if idx[i] {
			n *= bitCount(bits[i])
		}
	}
	if n != len(rs) {
		return false
	}
	ret := b.ret(out)
	for i, c := range rs[0].Args {
		pass := ret
		if i < len(rs[0].Args)-1 {
			pass = b.newLabel()
		}
		b.emit(stmt(ldW, uint32(offArgs+8*c.Index)))
		b.jump(jset, bits[c.Index], pass, allowL)
		if pass != ret {
			b.place(pass)
		}
	}
	return true
}

func oneBit(x uint32) bool { return x != 0 && x&(x-1) == 0 }

func bitCount(x uint32) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// finish places the shared returns and resolves every jump.
func (b *builder) finish() ([]unix.SockFilter, error) {
	for i, k := range b.rets {
		b.place(b.retAt[i])
		b.emit(stmt(ret, k))
	}
	for _, f := range b.fix {
		off := func(l label) (int, error) {
			at := b.at[l]
			if at < 0 {
				return 0, errors.New("seccomp: jump to a label never placed")
			}
			d := at - f.insn - 1
			if d < 0 || (!f.long && d > 255) {
				return 0, fmt.Errorf("seccomp: jump of %d instructions", d)
			}
			return d, nil
		}
		jt, err := off(f.jt)
		if err != nil {
			return nil, err
		}
		if f.long {
			b.prog[f.insn].K = uint32(jt)
			continue
		}
		jf, err := off(f.jf)
		if err != nil {
			return nil, err
		}
		b.prog[f.insn].Jt, b.prog[f.insn].Jf = uint8(jt), uint8(jf)
	}
	return b.prog, nil
}

// Install puts Policy on every thread of the process (TSYNC: all or
// none), inherited by everything it starts. It needs no_new_privs (or
// CAP_SYS_ADMIN).
func Install() error {
	prog, err := policyProgram(false)
	if err != nil {
		return err
	}
	return installAll(prog)
}

// policyProgram is Policy's program: the one compiled at build time for
// this architecture (precompiled_amd64.go, kept equal to Program's by
// TestPrecompiled) or, without one, compiled now. The stage installs it
// at every session start, in a fresh process where each allocation of
// the compile is a page fault.
func policyProgram(notified bool) ([]unix.SockFilter, error) {
	i := 0
	if notified {
		i = 1
	}
	if p := precompiled[i]; p != nil {
		return p, nil
	}
	return program(Policy(), notified)
}

// InstallRules is Install with another rule list (the confined build
// runner's, execution/sandbox/harden): one compiler for every filter.
func InstallRules(rules []Rule) error {
	prog, err := Program(rules)
	if err != nil {
		return err
	}
	return installAll(prog)
}

// installAll installs prog on every thread (TSYNC: all or none).
func installAll(prog []unix.SockFilter) error {
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
	prog, err := policyProgram(true)
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
