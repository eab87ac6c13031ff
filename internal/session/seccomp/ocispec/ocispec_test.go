package ocispec

import (
	"slices"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/loki-sh/loki/internal/session/seccomp"
)

// TestSeccompIsThePolicy: the profile is seccomp.Policy rule for rule,
// each condition "(arg & mask) == value" as libseccomp's masked compare
// (value the mask, valueTwo the datum).
func TestSeccompIsThePolicy(t *testing.T) {
	sc := Seccomp()
	rules := seccomp.Policy()
	if len(sc.Syscalls) != len(rules) {
		t.Fatalf("%d rules, want %d", len(sc.Syscalls), len(rules))
	}
	for i, r := range rules {
		got := sc.Syscalls[i]
		if !slices.Equal(got.Names, []string{r.Name}) || got.Action != specs.ActErrno || got.ErrnoRet == nil || *got.ErrnoRet != r.Errno || len(got.Args) != len(r.Args) {
			t.Fatalf("rule %d: %+v, want %+v", i, got, r)
		}
		for j, a := range r.Args {
			want := specs.LinuxSeccompArg{Index: a.Index, Value: uint64(a.Mask), ValueTwo: uint64(a.Value), Op: specs.OpMaskedEqual}
			if got.Args[j] != want {
				t.Errorf("rule %d (%s) arg %d: %+v, want %+v", i, r.Name, j, got.Args[j], want)
			}
		}
	}
}
