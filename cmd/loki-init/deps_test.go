package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestInitReachesOnlyItsPackages keeps the trusted PID 1 small: of this
// module it may use only the host<->init contracts, the reaper, the exit
// codes, internal/pid1, its build identity (cmd/internal/version), and
// the namespace backend's stage with what it
// applies (the policy's types, Landlock, the syscall policy, the egress
// listener handoff, the descriptor passing those handoffs share,
// the backends' path containment in isolation/mounts, a stdlib leaf).
// Anything else (sessions, executions, proof, the egress proxy itself) is
// the supervisor's and must never be linked into loki-init; nor may
// net/http or crypto/tls be.
func TestInitReachesOnlyItsPackages(t *testing.T) {
	const module = "github.com/loki-sh/loki/"
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	allowed := map[string]bool{
		"internal/lease": true, "internal/launch": true, "internal/reap": true,
		"internal/exitcode": true, "internal/pid1": true, "cmd/loki-init": true,
		"internal/session/isolation/namespace/stage": true, "internal/session/confine": true,
		"internal/landlock": true, "internal/session/seccomp": true, "internal/session/egress/handoff": true,
		"internal/session/fdpass": true, "internal/proc/sysmon": true, "internal/proc/sysmon/calm": true,
		"cmd/internal/version": true, "internal/session/isolation/mounts": true,
	}
	seen := 0
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "net/http" || pkg == "crypto/tls" {
			t.Errorf("loki-init depends on %s", pkg)
		}
		rel, ok := strings.CutPrefix(pkg, module)
		if !ok {
			continue
		}
		seen++
		if !allowed[rel] && !strings.HasPrefix(rel, "internal/pid1/") {
			t.Errorf("loki-init depends on %s", rel)
		}
	}
	if seen < 3 {
		t.Fatalf("go list -deps named %d packages of this module; the test cannot be trusted", seen)
	}
}
