package boundary

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/execution/sandbox/boundary/boundarytest"
)

// layout is the shared valid boundary (boundarytest) with a file and a
// bin directory among the runtime read paths; tests break one thing at a
// time.
type layout struct {
	*boundarytest.Layout
	rtFile string
}

func newLayout(t *testing.T) *layout {
	t.Helper()
	l := &layout{Layout: boundarytest.New(t, "")}
	l.rtFile = filepath.Join(l.RT, "tool")
	if err := os.MkdirAll(filepath.Join(l.RT, "bin"), 0o700); err != nil {
		t.Fatal(err)
	}
	boundarytest.WriteFile(t, l.rtFile, "x", 0o600)
	l.Env[EnvRuntimeReadPaths] = l.RT + ":" + l.rtFile
	l.Env[EnvChildPath] = boundarytest.ChildPath + ":" + l.RT + "/bin"
	return l
}

func TestLoadValid(t *testing.T) {
	l := newLayout(t)
	b, err := Load(l.Lookup, l.RunSh)
	if err != nil {
		t.Fatal(err)
	}
	if b.EngineSource() != filepath.Join(l.Root, "engine") || b.ProtectedRoot() != l.Protected {
		t.Errorf("engine %s, protected %s", b.EngineSource(), b.ProtectedRoot())
	}
	if got := b.RuntimeReadPaths(); !slices.Equal(got, []string{l.RT, l.rtFile}) {
		t.Errorf("runtime read paths %v (a file is allowed there)", got)
	}
	if got := b.ReservedPorts(); !slices.Equal(got, []int{8080}) {
		t.Errorf("ports %v", got)
	}
	if !slices.Contains(b.SystemReadPaths(), "/usr") {
		t.Errorf("system read paths %v lack /usr", b.SystemReadPaths())
	}
}

// TestLoadErrors covers every rejection: each row breaks one setting and
// expects an *Error naming exactly that setting, with a reason containing
// the given words.
func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name   string
		set    map[string]string // "" value with key in unset removes
		unset  []string
		runSh  string
		blame  string
		reason string
	}{
		{name: "run.sh empty", runSh: " ", blame: ArgRunSh, reason: "not a usable path"},
		{name: "run.sh relative", runSh: "engine/run.sh", blame: ArgRunSh, reason: "not an absolute path"},
		{name: "run.sh missing", runSh: "/nonexistent/loki/run.sh", blame: ArgRunSh, reason: "does not exist"},
		{name: "protected unset", unset: []string{EnvProtectedRoot}, blame: EnvProtectedRoot, reason: "not a usable path"},
		{name: "protected has tab", set: map[string]string{EnvProtectedRoot: "{root}/pro\ttected"}, blame: EnvProtectedRoot, reason: "tab"},
		{name: "protected has newline", set: map[string]string{EnvProtectedRoot: "{root}/protected\n/x"}, blame: EnvProtectedRoot, reason: "newline"},
		{name: "protected relative", set: map[string]string{EnvProtectedRoot: "protected"}, blame: EnvProtectedRoot, reason: "not an absolute path"},
		{name: "protected missing", set: map[string]string{EnvProtectedRoot: "{root}/nope"}, blame: EnvProtectedRoot, reason: "does not exist"},
		{name: "protected through a file", set: map[string]string{EnvProtectedRoot: "{root}/rt/tool/x"}, blame: EnvProtectedRoot, reason: "cannot be resolved: not a directory"},
		{name: "protected is root", set: map[string]string{EnvProtectedRoot: "/usr/.."}, blame: EnvProtectedRoot, reason: "filesystem root"},
		{name: "protected is a file", set: map[string]string{EnvProtectedRoot: "{root}/rt/tool"}, blame: EnvProtectedRoot, reason: "not a directory"},
		{name: "protected symlink loop", set: map[string]string{EnvProtectedRoot: "{root}/loop"}, blame: EnvProtectedRoot, reason: "symlink loop"},
		{name: "protected unknown user", set: map[string]string{EnvProtectedRoot: "~no-such-user-loki/x"}, blame: EnvProtectedRoot, reason: "home directory"},
		{name: "workspace roots unset", unset: []string{EnvWorkspaceRoots}, blame: EnvWorkspaceRoots, reason: "is not set"},
		{name: "workspace roots blank", set: map[string]string{EnvWorkspaceRoots: " \t "}, blame: EnvWorkspaceRoots, reason: "is not set"},
		{name: "workspace roots empty entry", set: map[string]string{EnvWorkspaceRoots: "{root}/protected/ws::{root}/protected/ws"}, blame: EnvWorkspaceRoots, reason: "empty entry"},
		{name: "workspace roots trailing colon", set: map[string]string{EnvWorkspaceRoots: "{root}/protected/ws:"}, blame: EnvWorkspaceRoots, reason: "empty entry"},
		{name: "workspace roots relative", set: map[string]string{EnvWorkspaceRoots: "ws"}, blame: EnvWorkspaceRoots, reason: "not an absolute path"},
		{name: "workspace roots missing", set: map[string]string{EnvWorkspaceRoots: "{root}/protected/none"}, blame: EnvWorkspaceRoots, reason: "does not exist"},
		{name: "workspace roots file", set: map[string]string{EnvWorkspaceRoots: "{root}/protected/ws/project/spec.md"}, blame: EnvWorkspaceRoots, reason: "not a directory"},
		{name: "workspace root is protected", set: map[string]string{EnvWorkspaceRoots: "{root}/protected"}, blame: EnvWorkspaceRoots, reason: "not strictly inside"},
		{name: "workspace root outside", set: map[string]string{EnvWorkspaceRoots: "{root}/protected/ws:{root}/out"}, blame: EnvWorkspaceRoots, reason: "not strictly inside"},
		{name: "runtime read unset", unset: []string{EnvRuntimeReadPaths}, blame: EnvRuntimeReadPaths, reason: "is not set"},
		{name: "runtime read missing", set: map[string]string{EnvRuntimeReadPaths: "{root}/rt/none"}, blame: EnvRuntimeReadPaths, reason: "does not exist"},
		{name: "runtime read inside protected", set: map[string]string{EnvRuntimeReadPaths: "{root}/rt:{root}/protected/ws"}, blame: EnvRuntimeReadPaths, reason: "overlaps"},
		{name: "runtime read contains protected", set: map[string]string{EnvRuntimeReadPaths: "{root}"}, blame: EnvRuntimeReadPaths, reason: "overlaps"},
		{name: "runtime write unset", unset: []string{EnvRuntimeWritePaths}, blame: EnvRuntimeWritePaths, reason: "is not set"},
		{name: "runtime write file", set: map[string]string{EnvRuntimeWritePaths: "{root}/rt/tool"}, blame: EnvRuntimeWritePaths, reason: "not a directory"},
		{name: "runtime write is protected", set: map[string]string{EnvRuntimeWritePaths: "{root}/protected"}, blame: EnvRuntimeWritePaths, reason: "overlaps"},
		{name: "child path unset", unset: []string{EnvChildPath}, blame: EnvChildPath, reason: "is not set"},
		{name: "child path file", set: map[string]string{EnvChildPath: "/usr/bin:/usr/sbin:{root}/rt/tool"}, blame: EnvChildPath, reason: "not a directory"},
		{name: "child path lacks sbin", set: map[string]string{EnvChildPath: "/usr/bin:/bin"}, blame: EnvChildPath, reason: "missing /usr/sbin"},
		{name: "child path lacks all", set: map[string]string{EnvChildPath: "{root}/rt/bin"}, blame: EnvChildPath, reason: "missing /usr/bin:/usr/sbin"},
		{name: "child path not readable", set: map[string]string{EnvChildPath: "/usr/bin:/usr/sbin:{root}/out"}, blame: EnvChildPath, reason: "not under an allowed read path"},
		{name: "ports unset", unset: []string{EnvReservedPorts}, blame: EnvReservedPorts, reason: "is not set"},
		{name: "ports blank", set: map[string]string{EnvReservedPorts: "  "}, blame: EnvReservedPorts, reason: "is not set"},
		{name: "ports empty entry", set: map[string]string{EnvReservedPorts: "80,,81"}, blame: EnvReservedPorts, reason: "empty entry"},
		{name: "ports trailing comma", set: map[string]string{EnvReservedPorts: "80,"}, blame: EnvReservedPorts, reason: "empty entry"},
		{name: "port zero", set: map[string]string{EnvReservedPorts: "0"}, blame: EnvReservedPorts, reason: `"0" is not a port`},
		{name: "port too big", set: map[string]string{EnvReservedPorts: "65536"}, blame: EnvReservedPorts, reason: `"65536" is not a port`},
		{name: "port huge", set: map[string]string{EnvReservedPorts: "99999999999999999999999"}, blame: EnvReservedPorts, reason: "is not a port"},
		{name: "port negative", set: map[string]string{EnvReservedPorts: "-1"}, blame: EnvReservedPorts, reason: "is not a port"},
		{name: "port plus", set: map[string]string{EnvReservedPorts: "+80"}, blame: EnvReservedPorts, reason: "is not a port"},
		{name: "port not ASCII digits", set: map[string]string{EnvReservedPorts: "\u0668\u0660"}, blame: EnvReservedPorts, reason: "is not a port"},
		{name: "port with inner space", set: map[string]string{EnvReservedPorts: "8 0"}, blame: EnvReservedPorts, reason: "is not a port"},
		{name: "port name", set: map[string]string{EnvReservedPorts: "http"}, blame: EnvReservedPorts, reason: "is not a port"},
		{name: "ports duplicate", set: map[string]string{EnvReservedPorts: "80,443,80"}, blame: EnvReservedPorts, reason: "port 80 is listed more than once"},
		{name: "ports duplicate by zeros", set: map[string]string{EnvReservedPorts: "080, 80"}, blame: EnvReservedPorts, reason: "port 80 is listed more than once"},
		{name: "bad port reported before repeat", set: map[string]string{EnvReservedPorts: "80,80,x"}, blame: EnvReservedPorts, reason: `"x" is not a port`},
		{name: "paths checked before ports", set: map[string]string{EnvReservedPorts: "x", EnvChildPath: "/usr/bin"}, blame: EnvChildPath, reason: "missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newLayout(t)
			if err := os.Symlink("loop", filepath.Join(l.Root, "loop")); err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.set {
				l.Env[k] = strings.ReplaceAll(v, "{root}", l.Root)
			}
			for _, k := range tc.unset {
				delete(l.Env, k)
			}
			runSh := l.RunSh
			if tc.runSh != "" {
				runSh = tc.runSh
			}
			_, err := Load(l.Lookup, runSh)
			assertBlame(t, err, tc.blame, tc.reason)
		})
	}
}

func assertBlame(t *testing.T, err error, name, reason string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("error %v is not a boundary *Error", err)
	}
	if e.Name != name {
		t.Fatalf("error blames %q, want %q (%v)", e.Name, name, err)
	}
	if !strings.Contains(e.Reason, reason) || !strings.HasPrefix(err.Error(), name+": ") {
		t.Fatalf("error %q does not say %q", err, reason)
	}
}

func TestForWorkspaceErrors(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		workspace, spec, runSh string
		blame, reason          string
	}{
		{"workspace missing", "{root}/protected/ws/none", "{root}/protected/ws/project/spec.md", "", ArgWorkspace, "does not exist"},
		{"workspace is a file", "{root}/protected/ws/project/spec.md", "{root}/protected/ws/project/spec.md", "", ArgWorkspace, "not a directory"},
		{"workspace is the root", "{root}/protected/ws", "{root}/protected/ws/project/spec.md", "", ArgWorkspace, "not strictly inside"},
		{"workspace outside the roots", "{root}/protected", "{root}/protected/ws/project/spec.md", "", ArgWorkspace, "not strictly inside"},
		{"spec missing", "{root}/protected/ws/project", "{root}/protected/ws/project/none.md", "", ArgSpec, "does not exist"},
		{"spec relative", "{root}/protected/ws/project", "spec.md", "", ArgSpec, "not an absolute path"},
		{"engine inside workspace", "{root}/protected/ws/project", "{root}/protected/ws/project/spec.md",
			"{root}/protected/ws/project/engine/autonomy/run.sh", ArgWorkspace, "overlaps the engine source"},
		{"workspace inside engine", "{root}/protected/ws/project/engine/sub", "{root}/protected/ws/project/spec.md",
			"{root}/protected/ws/project/autonomy/run.sh", ArgWorkspace, "overlaps the engine source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLayout(t)
			for _, d := range []string{"protected/ws/project/engine/autonomy", "protected/ws/project/engine/sub", "protected/ws/project/autonomy"} {
				os.MkdirAll(filepath.Join(l.Root, d), 0o700)
			}
			for _, f := range []string{"protected/ws/project/engine/autonomy/run.sh", "protected/ws/project/autonomy/run.sh"} {
				os.WriteFile(filepath.Join(l.Root, f), nil, 0o600)
			}
			r := func(s string) string { return strings.ReplaceAll(s, "{root}", l.Root) }
			runSh := l.RunSh
			if tc.runSh != "" {
				runSh = r(tc.runSh)
			}
			_, err := ForWorkspace(l.Lookup, r(tc.workspace), runSh, r(tc.spec))
			assertBlame(t, err, tc.blame, tc.reason)
		})
	}
}

func TestIdentityOfErrors(t *testing.T) {
	l := newLayout(t)
	_, err := IdentityOf(l.Lookup, l.Workspace, l.RunSh)
	assertBlame(t, err, ArgWorkspaceRoot, "is not an entry")
	_, err = IdentityOf(l.Lookup, filepath.Join(l.Root, "none"), l.RunSh)
	assertBlame(t, err, ArgWorkspaceRoot, "does not exist")
}

// TestDedupSystemLinks: on a merged-/usr system /bin and /sbin are links to
// /usr/bin and /usr/sbin; listing all four is valid and collapses to two,
// first occurrence first.
func TestDedupSystemLinks(t *testing.T) {
	if target, err := os.Readlink("/bin"); err != nil || strings.TrimPrefix(target, "/") != "usr/bin" {
		t.Skip("/bin is not a link to /usr/bin on this machine")
	}
	l := newLayout(t)
	for _, tc := range []struct {
		value string
		want  []string
	}{
		{"/usr/bin:/bin:/usr/sbin:/sbin", []string{"/usr/bin", "/usr/sbin"}},
		{"/bin:/usr/bin:/sbin:/usr/sbin", []string{"/usr/bin", "/usr/sbin"}},
		{"/sbin:/bin", []string{"/usr/sbin", "/usr/bin"}},
		{"/usr/sbin:" + l.RT + "/bin:/bin:/usr/bin/", []string{"/usr/sbin", l.RT + "/bin", "/usr/bin"}},
	} {
		l.Env[EnvChildPath] = tc.value
		b, err := Load(l.Lookup, l.RunSh)
		if err != nil {
			t.Fatalf("%s: %v", tc.value, err)
		}
		if got := b.ChildPath(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: child path %v, want %v", tc.value, got, tc.want)
		}
	}
}

// TestDedupResolvedLinks does the same with links made here, so it runs on
// every system: entries that resolve to one directory are one entry.
func TestDedupResolvedLinks(t *testing.T) {
	l := newLayout(t)
	link := filepath.Join(l.Protected, "ws-link")
	if err := os.Symlink("ws", link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(l.Protected, "other")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	l.Env[EnvWorkspaceRoots] = link + ":" + other + ":" + l.WSRoot + ":" + l.Protected + "/./other/../ws-link/"
	b, err := Load(l.Lookup, l.RunSh)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.WorkspaceRoots(); !slices.Equal(got, []string{l.WSRoot, other}) {
		t.Fatalf("workspace roots %v, want [%s %s]", got, l.WSRoot, other)
	}
}

func TestPathSpellings(t *testing.T) {
	l := newLayout(t)
	for _, tc := range []struct {
		name, value, want string
	}{
		{"home", "~/protected", l.Protected},
		{"python whitespace", "\x1c\x1f " + l.Protected + "\u00a0\u3000", l.Protected},
		{"dot and double slash", l.Root + "//./protected/", l.Protected},
		{"dot-dot after a file", l.rtFile + "/../../protected", l.Protected},
	} {
		l.Env[EnvProtectedRoot] = tc.value
		b, err := Load(l.Lookup, l.RunSh)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if b.ProtectedRoot() != tc.want {
			t.Errorf("%s: %q resolved to %q, want %q", tc.name, tc.value, b.ProtectedRoot(), tc.want)
		}
	}
}

func TestWithinAndParents(t *testing.T) {
	for _, tc := range []struct {
		path, root string
		want       bool
	}{
		{"/a/b", "/a", true}, {"/a", "/a", true}, {"/ab", "/a", false}, {"/a", "/a/b", false}, {"/x", "/", true},
	} {
		if got := Within(tc.path, tc.root); got != tc.want {
			t.Errorf("Within(%q, %q) = %v", tc.path, tc.root, got)
		}
	}
	if got := Parents("/a/b/c"); !slices.Equal(got, []string{"/a/b", "/a", "/"}) {
		t.Errorf("Parents = %v", got)
	}
	if got := Parents("/"); len(got) != 0 {
		t.Errorf("Parents(/) = %v", got)
	}
}
