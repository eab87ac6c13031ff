//go:build linux

package seccomp

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// linearProgram is the compilation Program replaced, kept as the
// reference its decisions are proven against: per ABI, one block per
// syscall, tested one after another, each rule's conditions as load,
// mask, compare.
func linearProgram(rules []Rule, notified bool) []unix.SockFilter {
	var sections [][]unix.SockFilter
	for _, a := range abis {
		s := []unix.SockFilter{stmt(ldW, offNr)}
		if a.x32 {
			s = append(s, jump(jge, 0x40000000, 0, 1), stmt(ret, unix.SECCOMP_RET_ERRNO|EPERM))
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
				n := len(r.Args)
				for i, c := range r.Args {
					left := 3*(n-i-1) + 1
					block = append(block,
						stmt(ldW, uint32(offArgs+8*c.Index)),
						stmt(and, c.Mask),
						jump(jeq, c.Value, 0, left))
				}
				block = append(block, stmt(ret, outcome(r, notified)))
			}
			block = append(block, stmt(ret, allow))
			s = append(s, jump(jeq, nr, 0, len(block)))
			s = append(s, block...)
		}
		sections = append(sections, append(s, stmt(ret, allow)))
	}
	head := []unix.SockFilter{stmt(ldW, offArch)}
	to := 1 + 2*len(abis) + 1
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
	return prog
}

// run interprets a classic BPF seccomp program on one call, as the
// kernel would: it returns the action, or an error for an instruction
// the kernel would refuse or a jump out of the program.
func run(prog []unix.SockFilter, arch, nr uint32, args [6]uint64) (uint32, error) {
	word := func(off uint32) (uint32, error) {
		switch {
		case off == offNr:
			return nr, nil
		case off == offArch:
			return arch, nil
		case off >= offArgs && off < offArgs+48 && off%4 == 0:
			a := args[(off-offArgs)/8]
			if (off-offArgs)%8 == 4 {
				return uint32(a >> 32), nil
			}
			return uint32(a), nil
		}
		return 0, fmt.Errorf("load at %d", off)
	}
	var acc uint32
	for pc, steps := 0, 0; steps < len(prog)+1; steps++ {
		if pc < 0 || pc >= len(prog) {
			return 0, fmt.Errorf("pc %d out of the program", pc)
		}
		in := prog[pc]
		pc++
		switch in.Code {
		case ldW:
			w, err := word(in.K)
			if err != nil {
				return 0, err
			}
			acc = w
		case and:
			acc &= in.K
		case ja:
			pc += int(in.K)
		case jeq, jge, jset, unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K:
			var ok bool
			switch in.Code {
			case jeq:
				ok = acc == in.K
			case jge:
				ok = acc >= in.K
			case jset:
				ok = acc&in.K != 0
			default:
				ok = acc > in.K
			}
			if ok {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case ret:
			return in.K, nil
		default:
			return 0, fmt.Errorf("instruction %#x at %d", in.Code, pc-1)
		}
	}
	return 0, fmt.Errorf("no return")
}

// argValues are the values worth trying for each argument: every
// combination of the bits the rules test there, every rule's value and
// its neighbours, none and all bits (the caller adds high bits, which
// the filter must ignore).
func argValues(rules []Rule) [6][]uint64 {
	var out [6][]uint64
	var bits [6]uint32
	var vals [6][]uint32
	for _, r := range rules {
		for _, c := range r.Args {
			bits[c.Index] |= c.Mask
			vals[c.Index] = append(vals[c.Index], c.Value, c.Value+1, c.Value-1, c.Value^c.Mask, c.Mask)
		}
	}
	for i := range out {
		set := map[uint32]bool{0: true, 0xffffffff: true, 0o777: true}
		for _, v := range vals[i] {
			set[v] = true
		}
		if bitCount(bits[i]) <= 8 {
			// every subset of the tested bits, over 0 and over the rest
			for sub := bits[i]; ; sub = (sub - 1) & bits[i] {
				set[sub] = true
				set[sub|^bits[i]] = true
				if sub == 0 {
					break
				}
			}
		}
		for v := range set {
			out[i] = append(out[i], uint64(v))
		}
	}
	return out
}

// synthetic has the rule shapes the two policies lack: a mask of
// several bits, a bit that must be clear, a rule without conditions
// after one with, a name given twice apart, alike rules on numbers far
// apart, and one almost a product of bits but not quite.
var synthetic = []Rule{
	{Name: "fchmod", Errno: EPERM, Args: []Arg{{Index: 1, Mask: 0o6000, Value: 0o6000}}},
	{Name: "fchmod", Errno: ENOSYS, Args: []Arg{{Index: 1, Mask: 0o100, Value: 0}, {Index: 0, Mask: 0xff, Value: 3}}},
	{Name: "fchmod", Errno: EOPNOTSUPP},
	{Name: "socket", Errno: EPERM, Args: []Arg{{Index: 0, Mask: 0xffff, Value: 16}}},
	{Name: "keyctl", Errno: EPERM},
	{Name: "socket", Errno: EPERM, Args: []Arg{{Index: 2, Mask: 0xffffffff, Value: 0}}},
	{Name: "add_key", Errno: EPERM},
	{Name: "bpf", Errno: EPERM, Args: []Arg{{Index: 0, Mask: 1, Value: 1}}},
	{Name: "setsockopt", Errno: EPERM, Args: []Arg{{Index: 0, Mask: 1, Value: 1}}},
	{Name: "openat", Errno: EPERM, Args: []Arg{{Index: 1, Mask: 1, Value: 1}, {Index: 2, Mask: 4, Value: 4}}},
	{Name: "openat", Errno: EPERM, Args: []Arg{{Index: 1, Mask: 2, Value: 2}, {Index: 2, Mask: 4, Value: 4}}},
	{Name: "openat", Errno: EPERM, Args: []Arg{{Index: 1, Mask: 2, Value: 2}, {Index: 2, Mask: 8, Value: 8}}},
}

// TestProgramDecisions proves Program's decisions equal to the plain
// compilation's (linearProgram) and to Matcher, for both policies, with
// and without a listener: every number 0..1023 and the ends of the
// 32-bit range on every ABI (and on an ABI the filter does not know),
// each with every combination of the argument values that matter on
// a number with rules, and a spread of them on the others.
func TestProgramDecisions(t *testing.T) {
	if len(abis) == 0 {
		t.Skip("no syscall table for this architecture")
	}
	for _, pol := range []struct {
		name  string
		rules []Rule
	}{{"Policy", Policy()}, {"RunnerPolicy", RunnerPolicy()}, {"synthetic", synthetic}} {
		for _, notified := range []bool{false, true} {
			prog, err := program(pol.rules, notified)
			if err != nil {
				t.Fatal(err)
			}
			ref := linearProgram(pol.rules, notified)
			t.Logf("%s notified=%v: %d instructions (plain compilation: %d)", pol.name, notified, len(prog), len(ref))
			if len(prog) >= len(ref) && pol.name != "synthetic" {
				t.Errorf("%s: %d instructions, no fewer than %d", pol.name, len(prog), len(ref))
			}
			m := &Matcher{rules: map[uint64][]Rule{}}
			for _, a := range abis {
				for _, r := range pol.rules {
					if nr, ok := a.nrs[r.Name]; ok {
						k := uint64(a.arch)<<32 | uint64(nr)
						m.rules[k] = append(m.rules[k], r)
					}
				}
			}
			vals := argValues(pol.rules)
			var tested [6]bool
			for _, r := range pol.rules {
				for _, c := range r.Args {
					tested[c.Index] = true
				}
			}
			calls := 0
			var decide func(arch, nr uint32, args [6]uint64)
			check := func(arch, nr uint32, args [6]uint64) {
				for _, high := range []uint64{0, 0xffffffff00000000} {
					for i := range args {
						args[i] = args[i]&0xffffffff | high
					}
					decide(arch, nr, args)
				}
			}
			decide = func(arch, nr uint32, args [6]uint64) {
				calls++
				got, err := run(prog, arch, nr, args)
				if err != nil {
					t.Fatalf("%s arch %#x nr %d: %v", pol.name, arch, nr, err)
				}
				want, err := run(ref, arch, nr, args)
				if err != nil {
					t.Fatalf("reference: %v", err)
				}
				if got != want {
					t.Fatalf("%s notified=%v arch %#x nr %d args %#x: %#x, the plain program says %#x", pol.name, notified, arch, nr, args, got, want)
				}
				// Matcher agrees on what the rules decide (x32 is the
				// filter's own refusal).
				if r, ok := m.Match(arch, nr, args); ok {
					if got != outcome(r, notified) {
						t.Fatalf("%s arch %#x nr %d args %#x: %#x, Matcher says %s", pol.name, arch, nr, args, got, r.Name)
					}
				} else if got != allow && !(nr >= 0x40000000 && got == unix.SECCOMP_RET_ERRNO|EPERM) {
					t.Fatalf("%s arch %#x nr %d args %#x: %#x, Matcher says allow", pol.name, arch, nr, args, got)
				}
			}
			ruled := map[uint64]bool{}
			for k := range m.rules {
				ruled[k] = true
			}
			archs := []uint32{0, unix.AUDIT_ARCH_PPC64LE}
			for _, a := range abis {
				archs = append(archs, a.arch)
			}
			nrs := []uint32{0x3fffffff, 0x40000000, 0x40000001, 0x40000002 + 257, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff}
			for nr := uint32(0); nr < 1024; nr++ {
				nrs = append(nrs, nr)
			}
			for _, arch := range archs {
				for _, nr := range nrs {
					if !ruled[uint64(arch)<<32|uint64(nr)] {
						for _, v := range vals[1] {
							check(arch, nr, [6]uint64{v, v, v, v, v, v})
						}
						continue
					}
					// every combination over the tested arguments
					var args [6]uint64
					var walk func(i int)
					walk = func(i int) {
						if i == 6 {
							check(arch, nr, args)
							return
						}
						if !tested[i] {
							args[i] = 0x5a5a5a5a
							walk(i + 1)
							return
						}
						for _, v := range vals[i] {
							args[i] = v
							walk(i + 1)
						}
					}
					walk(0)
				}
			}
			t.Logf("%s notified=%v: %d calls compared", pol.name, notified, calls)
		}
	}
}
