package main

import (
	"os"
	"runtime"

	"github.com/loki-sh/loki/internal/execution/sandbox/seatbelt"
	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/proc/lineage"
	"github.com/loki-sh/loki/internal/session/isolation/oci"
)

// entry is an internal entry point: a role this binary takes when it
// re-executes itself, never a command of its CLI (none has flags, help or
// a place in --help, and each must run before the CLI exists).
type entry struct {
	name  string                    // what names the role: argv or the environment
	match func(args []string) bool  // args is os.Args
	run   func(args []string) error // the role's body; returns only on failure
}

// payloadCommand names the Seatbelt probe's payload role: the probe runs a
// copy of this binary as "probe seatbelt-payload ..." inside the sandbox.
const payloadCommand = "seatbelt-payload"

// internalEntries is every internal entry point, consulted in this order
// first thing in main.
var internalEntries = []entry{
	// lineage's exec gate, named by an environment variable carrying a
	// per-spawn nonce; args are the runner's own. It must run before flags,
	// signal handlers or goroutines exist.
	{"lineage exec gate (environment)", func([]string) bool { return lineage.IsGate() },
		func([]string) error { return lineage.RunGate() }},
	// lineage's keeper, named by argv[0] and the environment: it outlives
	// a killed supervisor to end what its runner left.
	{"lineage keeper (environment)", func([]string) bool { return lineage.IsKeeper() },
		func([]string) error { return lineage.RunKeeper() }},
	// The oci backend's cgroup shim, a private mount namespace that execs
	// the runtime.
	{oci.ShimCommand, argv(oci.ShimCommand), func(a []string) error { return oci.RunShim(a[2:]) }},
	// The Seatbelt probe's payload, run confined by the profile under test.
	{"probe " + payloadCommand, argv("probe", payloadCommand), func(a []string) error {
		if code := seatbelt.RunPayload(a[3:]); code != 0 {
			return exitcode.Exited(code)
		}
		return nil
	}},
}

// argv matches os.Args that start with words.
func argv(words ...string) func([]string) bool {
	return func(args []string) bool {
		if len(args) < 1+len(words) {
			return false
		}
		for i, w := range words {
			if args[1+i] != w {
				return false
			}
		}
		return true
	}
}

// The main goroutine stays on the thread the kernel started the process
// with until the table has been consulted: a parent-death signal set at
// spawn belongs to that thread, and a role that execs from any other
// would lose it.
func init() { runtime.LockOSThread() }

// runInternal runs the internal entry point os.Args names, if any, and
// exits; otherwise it releases the main thread and returns.
func runInternal() {
	for _, e := range internalEntries {
		if e.match(os.Args) {
			os.Exit(exitcode.Code(e.run(os.Args)))
		}
	}
	runtime.UnlockOSThread()
}
