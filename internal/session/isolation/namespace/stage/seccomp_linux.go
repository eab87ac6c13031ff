//go:build linux

package stage

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// keyringSyscalls are denied to the peer: the kernel's keyrings are not
// namespaced, so a uid-0 peer could read (and add to) the user keyring
// of the host's root, which is where its secrets are kept. Docker's
// default profile denies the same three.
type syscallSet struct {
	arch uint32
	nrs  []uint32
}

// bpf is a seccomp program under construction, with forward jumps to
// named labels resolved at the end.
type bpf struct {
	ins    []unix.SockFilter
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at            int
	ifTrue, ifNot string // "" = next instruction
}

func (b *bpf) stmt(code uint16, k uint32) {
	b.ins = append(b.ins, unix.SockFilter{Code: code, K: k})
}

func (b *bpf) jeq(k uint32, ifTrue, ifNot string) {
	b.fixups = append(b.fixups, fixup{len(b.ins), ifTrue, ifNot})
	b.ins = append(b.ins, unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k})
}

func (b *bpf) jge(k uint32, ifTrue, ifNot string) {
	b.fixups = append(b.fixups, fixup{len(b.ins), ifTrue, ifNot})
	b.ins = append(b.ins, unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, K: k})
}

func (b *bpf) label(name string) { b.labels[name] = len(b.ins) }

func (b *bpf) program() ([]unix.SockFilter, error) {
	for _, f := range b.fixups {
		for _, j := range []struct {
			name string
			dst  *uint8
		}{{f.ifTrue, &b.ins[f.at].Jt}, {f.ifNot, &b.ins[f.at].Jf}} {
			if j.name == "" {
				continue
			}
			to, ok := b.labels[j.name]
			off := to - f.at - 1
			if !ok || off < 0 || off > 255 {
				return nil, fmt.Errorf("seccomp: bad jump to %q", j.name)
			}
			*j.dst = uint8(off)
		}
	}
	return b.ins, nil
}

// denyKeyrings installs a seccomp filter on every thread (inherited by
// the peer) that fails the keyring syscalls with EPERM,
// for the native ABI and its compat one; the x32 ABI, which nothing
// here uses, is refused entirely. Needs no_new_privs.
func denyKeyrings() error {
	native, compat, x32 := keyringSyscalls()
	if native.arch == 0 {
		return nil
	}
	const (
		ldArch = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		ret    = unix.BPF_RET | unix.BPF_K
	)
	b := &bpf{labels: map[string]int{}}
	b.stmt(ldArch, 4) // seccomp_data.arch
	b.jeq(native.arch, "native", "")
	if compat.arch != 0 {
		b.jeq(compat.arch, "compat", "")
	}
	b.stmt(ret, unix.SECCOMP_RET_ALLOW) // an ABI this kernel runs nothing of ours in
	for _, set := range []struct {
		name string
		s    syscallSet
		x32  bool
	}{{"native", native, x32}, {"compat", compat, false}} {
		if set.s.arch == 0 {
			continue
		}
		b.label(set.name)
		b.stmt(ldArch, 0) // seccomp_data.nr
		if set.x32 {
			b.jge(0x40000000, "deny", "")
		}
		for _, nr := range set.s.nrs {
			b.jeq(nr, "deny", "")
		}
		b.stmt(ret, unix.SECCOMP_RET_ALLOW)
	}
	b.label("deny")
	b.stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	prog, err := b.program()
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// TSYNC: every thread of the process gets the filter, or none does
	// (the call then names the thread that could not take it).
	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	if e != 0 {
		return fmt.Errorf("seccomp filter: %w", e)
	}
	if r != 0 {
		return fmt.Errorf("seccomp filter: thread %d could not take it", r)
	}
	return nil
}
