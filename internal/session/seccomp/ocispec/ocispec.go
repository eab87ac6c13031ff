package ocispec

import (
	"runtime"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/loki-sh/loki/internal/session/seccomp"
)

// Seccomp is the session's syscall policy (seccomp.Policy) as a
// config's linux.seccomp: everything allowed but the policy's rules, each with
// its errno. The compat ABIs are listed so that their programs still run
// (an ABI missing from a filter is killed) under the same rules. A
// runtime whose libseccomp does not know a name leaves that rule out,
// so loki-init installs the policy itself as well (its -seccomp).
func Seccomp() *specs.LinuxSeccomp {
	var arches []specs.Arch
	switch runtime.GOARCH {
	case "amd64":
		arches = []specs.Arch{specs.ArchX86_64, specs.ArchX86, specs.ArchX32}
	case "arm64":
		arches = []specs.Arch{specs.ArchAARCH64, specs.ArchARM}
	}
	sc := &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Architectures: arches}
	for _, r := range seccomp.Policy() {
		errno := r.Errno
		rule := specs.LinuxSyscall{Names: []string{r.Name}, Action: specs.ActErrno, ErrnoRet: &errno}
		for _, a := range r.Args {
			rule.Args = append(rule.Args, specs.LinuxSeccompArg{Index: a.Index,
				Value: uint64(a.Mask), ValueTwo: uint64(a.Value), Op: specs.OpMaskedEqual})
		}
		sc.Syscalls = append(sc.Syscalls, rule)
	}
	return sc
}
