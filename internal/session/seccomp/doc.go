// Package seccomp is the session's one syscall policy: which system
// calls a peer may not make, with the errno it gets instead. Every
// backend applies this one definition: the namespace stage and loki-init
// install it as a BPF program on every thread (Install; on amd64 the
// program is compiled at build time, precompiled_amd64.go), the oci backend writes it as the config's linux.seccomp,
// and the docker backend hands the same profile to the engine.
// RunnerPolicy is the one other filter, a confined build runner's
// (execution/sandbox/harden), compiled by the same Program.
//
// Guarantees:
//   - Policy is the whole list; nothing else denies a syscall to a
//     session's peer, and everything not in it is allowed.
//   - A rule with argument conditions denies the call only when every
//     condition holds on the argument's low 32 bits (the kernel reads
//     these arguments as 32-bit ints, so high bits cannot slip past).
//   - Install either puts the whole policy on every thread of the
//     process, for the native ABI and its compat one, or fails and
//     changes nothing; the x32 ABI is refused whole. On an architecture
//     without a syscall table here it installs nothing (ErrUnsupported).
//   - InstallNotified installs the same program with each rule's
//     denial handed to a listener (the namespace stage, for a status
//     stream); Matcher gives the rule, hence the errno, its holder
//     answers (package notify). Without a holder the kernel refuses
//     the call with ENOSYS: a call the policy denies never runs.
//
// The package is linked into loki-init: it uses x/sys/unix and nothing
// of this module.
package seccomp
