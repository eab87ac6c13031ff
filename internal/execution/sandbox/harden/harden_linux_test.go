package harden

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestFilterJumpsStayInside: every jump of the program lands on one of its
// instructions and the program ends in a return (the kernel refuses any
// other, and a wrong offset would allow what it meant to refuse).
func TestFilterJumpsStayInside(t *testing.T) {
	p, err := Filter()
	if err != nil {
		t.Skip(err)
	}
	for i, ins := range p {
		if ins.Code&0x07 != unix.BPF_JMP {
			continue
		}
		far := int(ins.Jt)
		if int(ins.Jf) > far {
			far = int(ins.Jf)
		}
		if ins.Code&0xf0 == unix.BPF_JA {
			far = int(ins.K)
		}
		if i+1+far >= len(p) {
			t.Errorf("instruction %d jumps past the end", i)
		}
	}
	if last := p[len(p)-1]; last.Code != unix.BPF_RET|unix.BPF_K || last.K != unix.SECCOMP_RET_ALLOW {
		t.Errorf("program ends with %+v", last)
	}
}
