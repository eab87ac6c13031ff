package backends

import (
	"fmt"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
)

// Backend is one way of running a session under test.
type Backend struct {
	// Name is the subtest's name.
	Name string
	// Isolation is the --isolation value.
	Isolation string
	// Unprivileged: the supervisor runs as testutil.Nobody (see
	// testutil.AsNobody), which takes the namespace backend's user
	// namespace path.
	Unprivileged bool
	// Container: the peer sees the tree's root filesystem (or image),
	// not the host's files.
	Container bool
	require   func(t testing.TB)
	flags     func(t testing.TB, tree Tree) []string
}

// Tree is what the container rows run.
type Tree int

const (
	// Busybox is testutil.BusyboxRootfs for oci, testutil.BusyboxImage
	// for docker.
	Busybox Tree = iota
	// HostUsr is testutil.UsrRootfs for oci, testutil.UsrImage for
	// docker, with the host's /usr bound read-only (node and its
	// libraries).
	HostUsr
)

// Require skips (or fails under CI=true) unless this host can run b.
func (b Backend) Require(t testing.TB) {
	t.Helper()
	b.require(t)
}

// Flags requires b and returns the loki-supervise flags selecting it, a
// container row on tree.
func (b Backend) Flags(t testing.TB, tree Tree) []string {
	t.Helper()
	b.Require(t)
	return b.flags(t, tree)
}

// Init reports whether the session has loki-init and a PID namespace of
// its own, whose members are the session's processes.
func (b Backend) Init() bool { return b.Isolation != "none" }

func oci(runtime string) Backend {
	return Backend{Name: "oci-" + runtime, Isolation: "oci", Container: true,
		require: func(t testing.TB) {
			t.Helper()
			testutil.RequireRoot(t)
			testutil.RequireCommand(t, runtime)
		},
		flags: func(t testing.TB, tree Tree) []string {
			t.Helper()
			if tree == HostUsr {
				return []string{"--isolation", "oci", "--runtime", runtime, "--rootfs", testutil.UsrRootfs(t), "--bind", "/usr:/usr:ro"}
			}
			return []string{"--isolation", "oci", "--runtime", runtime, "--rootfs", testutil.BusyboxRootfs(t)}
		}}
}

var table = []Backend{
	{Name: "namespace", Isolation: "namespace",
		require: func(t testing.TB) {
			t.Helper()
			testutil.RequireRoot(t)
			testutil.RequirePIDNamespace(t)
		}},
	{Name: "namespace-userns", Isolation: "namespace", Unprivileged: true,
		require: func(t testing.TB) {
			t.Helper()
			testutil.RequireUserNamespaces(t)
		}},
	oci("crun"),
	oci("runc"),
	{Name: "docker", Isolation: "docker", Container: true,
		require: func(t testing.TB) {
			t.Helper()
			testutil.RequireDocker(t)
		},
		flags: func(t testing.TB, tree Tree) []string {
			t.Helper()
			docker := testutil.RequireDocker(t)
			if tree == HostUsr {
				return []string{"--isolation", "docker", "--docker", docker, "--image", testutil.RequireUsrImage(t, docker), "--bind", "/usr:/usr:ro"}
			}
			return []string{"--isolation", "docker", "--docker", docker, "--image", testutil.DockerImage(t, testutil.BusyboxImage)}
		}},
	{Name: "none", Isolation: "none", require: func(testing.TB) {}},
}

func init() {
	for i := range table {
		if table[i].flags == nil {
			iso := table[i].Isolation
			table[i].flags = func(testing.TB, Tree) []string { return []string{"--isolation", iso} }
		}
	}
}

// All is every row, in the table's order.
func All() []Backend { return append([]Backend(nil), table...) }

// Get is the row called name; a name no row has is a test's typo, and
// panics.
func Get(name string) Backend {
	for _, b := range table {
		if b.Name == name {
			return b
		}
	}
	panic(fmt.Sprintf("backends: no row %q", name))
}

// Of is the rows called names, in that order.
func Of(names ...string) []Backend {
	out := make([]Backend, len(names))
	for i, n := range names {
		out[i] = Get(n)
	}
	return out
}
