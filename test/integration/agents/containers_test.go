//go:build linux

package agents

import (
	"reflect"
	"testing"

	"github.com/loki-sh/loki/internal/testutil/backends"
)

// containerFlags: the agent in a container (backends.HostUsr: the host's
// /usr bound read-only) with test/agents bound read-only and its HOME
// bound writable (--write), where the agent's files are the host's: state
// kept, protected paths read-only as on namespace.
func containerFlags(t *testing.T, in install, b backends.Backend, home, proj string) []string {
	t.Helper()
	return append(b.Flags(t, backends.HostUsr), "--bind", in.dir+":"+in.dir+":ro", "--write", home, "--env", "HOME="+home, "--env", "PATH", "--cwd", proj)
}

// TestACPAgentsContainers: as root, each ACP agent holds the direct
// run's conversation through oci (crun) and docker, twice in a row,
// with the project in a 0700 HOME bound by --write. Before, on crun the
// second session failed: a protected file's placeholder (0600, bound
// without idmap) was unreadable to the container's root, and gemini and
// codex-acp exited at start.
func TestACPAgentsContainers(t *testing.T) {
	in := setup(t)
	for _, a := range acpAgents {
		var direct *transcript
		for _, backend := range backends.Of("oci-crun", "docker") {
			t.Run(a.name+"/"+backend.Name, func(t *testing.T) {
				if direct == nil {
					home, proj, err := layouts[0].make(t, 0)
					if err != nil {
						t.Fatal(err)
					}
					d := drive(t, in, 0, home, proj, a.argv)
					direct = &d
				}
				home, proj, err := layouts[0].make(t, 0)
				if err != nil {
					t.Fatal(err)
				}
				s := session(t, in, 0, a.argv)
				flags := containerFlags(t, in, backend, home, proj)
				cmd := append(append(append([]string{}, s[:len(s)-len(a.argv)-1]...), flags...), append([]string{"--"}, a.argv...)...)
				// Twice: the second session starts on the state the first
				// one left (and the placeholders over its protected files).
				for _, run := range []string{"first", "second"} {
					got := drive(t, in, 0, home, proj, cmd)
					if !reflect.DeepEqual(steps(got), steps(*direct)) {
						t.Errorf("%s session through %s:\n %s\ndirectly:\n %s\nsession's stderr: %q", run, backend.Name, steps(got), steps(*direct), got.StderrTail)
					}
					if c := got.Exit.Code; c != nil && (*c == 124 || *c == 125 || *c == 127) && !eofCut(got, *direct) {
						t.Errorf("the %s session exited %d: %q", run, *c, got.StderrTail)
					}
				}
			})
		}
	}
}
