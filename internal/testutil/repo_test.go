package testutil

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestNoInstalledPackagesCommitted: npm's installs (test/acp,
// test/agents) are made by the tests from their lockfiles, never
// committed: test/agents' weighs 1.3 GB, over what a submission may
// carry. A branch that still holds the commit that once added it
// ("cmd/loki-supervise: doctor starts the sessions it says can run",
// 01c836e, rewritten on main without it) must drop that commit:
// `git rebase --onto main 01c836e`.
func TestNoInstalledPackagesCommitted(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	cmd := exec.Command(git, "ls-files", "--", ":(glob)**/node_modules/**")
	cmd.Dir = ModuleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("not a git work tree: %v", err)
	}
	if files := strings.Fields(string(out)); len(files) > 0 {
		t.Fatalf("%d files under node_modules are committed (first %s): drop the commit that added them; see this test's comment", len(files), files[0])
	}
}

// TestInternalTopLevelDirs keeps internal/ readable at a glance (issue
// 31): at most 14 top-level packages, each an area of the README's layout
// table. A new package goes under the area it serves (session/...,
// execution/..., proc/..., proof/...) unless it is a leaf every area
// uses.
func TestInternalTopLevelDirs(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	cmd := exec.Command(git, "ls-files", "--", "internal/")
	cmd.Dir = ModuleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("not a git work tree: %v", err)
	}
	dirs := map[string]bool{}
	for _, f := range strings.Fields(string(out)) {
		if parts := strings.SplitN(f, "/", 3); len(parts) == 3 {
			dirs[parts[1]] = true
		}
	}
	if len(dirs) > 14 {
		names := make([]string, 0, len(dirs))
		for d := range dirs {
			names = append(names, d)
		}
		slices.Sort(names)
		t.Fatalf("internal/ has %d top-level directories (%s), at most 14: move the new one under the area it serves", len(dirs), strings.Join(names, " "))
	}
}
