package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestInitReachesOnlyItsPackages keeps the trusted PID 1 small: of this
// module it may use only the host<->init contracts, the reaper, the exit
// codes and internal/pid1. Anything else (sessions, executions, proof) is
// the supervisor's and must never be linked into loki-init.
func TestInitReachesOnlyItsPackages(t *testing.T) {
	const module = "github.com/loki-sh/loki/"
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	allowed := map[string]bool{
		"internal/lease": true, "internal/launch": true, "internal/reap": true,
		"internal/exitcode": true, "internal/pid1": true, "cmd/loki-init": true,
	}
	seen := 0
	for _, pkg := range strings.Fields(string(out)) {
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
