package treedigest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/testutil"
)

// The expected digests below are built from the spec by hand: the manifest
// is written out as a literal, with content hashes computed from the
// literal contents, and hashed here; nothing calls this package to derive
// what it is expected to return.

const (
	manifestHead = `{"entries":[`
	manifestTail = `],"excluded_walk_directories":[".git",".mypy_cache",".pytest_cache",".venv","__pycache__","node_modules","venv"],` +
		`"filesystem_walk_excluded_top_level_directories":[".git",".loki",".next",".nuxt","target"],"version":3}`
)

func hexSum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// jsonPath is the path as it appears in the manifest; test paths are
// chosen so that only the few escapes below are needed.
func fileJSON(path, content string, exec bool) string {
	return fmt.Sprintf(`{"executable":%t,"kind":"file","path":"%s","sha256":"%s","size":%d}`, exec, path, hexSum(content), len(content))
}

func symlinkJSON(path, target string) string {
	return fmt.Sprintf(`{"executable":true,"kind":"symlink","path":"%s","sha256":"%s","size":%d}`, path, hexSum(target), len(target))
}

func manifestSum(entries ...string) string {
	return hexSum(manifestHead + strings.Join(entries, ",") + manifestTail)
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return run(t, dir, "git", append([]string{"-c", "user.email=t@example.invalid", "-c", "user.name=t", "-c", "init.defaultBranch=main"}, args...)...)
}

func newRepo(t *testing.T) string {
	t.Helper()
	testutil.RequireCommand(t, "git")
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	return dir
}

func write(t *testing.T, root, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // umask-proof
		t.Fatal(err)
	}
}

func digestOf(t *testing.T, root string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := Digest(ctx, root)
	if err != nil {
		t.Fatalf("Digest(%s): %v", root, err)
	}
	return d
}

// TestSmallTrees: each tree's digest is the sum of exactly the manifest
// entries listed.
func TestSmallTrees(t *testing.T) {
	for _, tc := range []struct {
		name string
		// build lays out the tree in a fresh repo and returns the entries
		// its manifest must hold, in order.
		build func(t *testing.T, root string) []string
	}{
		{"empty repo", func(*testing.T, string) []string { return nil }},
		{"single file", func(t *testing.T, root string) []string {
			write(t, root, "a", "hi\n", 0o644)
			git(t, root, "add", "a")
			return []string{fileJSON("a", "hi\n", false)}
		}},
		// When a tracked directory is replaced by a symlink (here to a
		// directory outside the tree holding the same names), its tracked
		// files are missing, as git reports them, and nothing outside the
		// tree is read.
		{"index path through symlink", func(t *testing.T, root string) []string {
			write(t, root, "d/f", "inside\n", 0o644)
			git(t, root, "add", "d/f")
			outside := t.TempDir()
			write(t, outside, "f", "outside\n", 0o644)
			if err := os.RemoveAll(filepath.Join(root, "d")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(root, "d")); err != nil {
				t.Fatal(err)
			}
			return []string{symlinkJSON("d", outside), `{"kind":"missing","path":"d/f"}`}
		}},
		// The tracked file is gone (missing); what the directory now holds
		// is listed on its own.
		{"tracked file replaced by directory", func(t *testing.T, root string) []string {
			write(t, root, "x", "file\n", 0o644)
			git(t, root, "add", "x")
			if err := os.Remove(filepath.Join(root, "x")); err != nil {
				t.Fatal(err)
			}
			write(t, root, "x/y", "y\n", 0o644)
			return []string{`{"kind":"missing","path":"x"}`, fileJSON("x/y", "y\n", false)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newRepo(t)
			want := manifestSum(tc.build(t, root)...)
			if got := digestOf(t, root); got != want {
				t.Errorf("digest = %s, want %s", got, want)
			}
		})
	}
}

// buildMixed makes the tree of the issue: tracked, untracked,
// ignored-but-present, deleted-from-disk, executable, symlink, fifo,
// non-ASCII and non-UTF-8 names, node_modules, .loki, a top-level target
// and a nested one, a directory symlink and a submodule.
func buildMixed(t *testing.T) (root, sub string) {
	t.Helper()
	root = newRepo(t)
	// The files: those added (with -f) before gone.txt is deleted, then
	// the ones git is never told about.
	files := []struct {
		rel, content string
		mode         os.FileMode
		added        bool
	}{
		{".gitignore", "ignored.txt\nnode_modules/\n", 0o644, true},
		{"tracked.txt", "tracked\n", 0o644, true},
		{"run.sh", "#!/bin/sh\n", 0o744, true},
		{"gone.txt", "deleted soon\n", 0o644, true},
		{"dir/caf\xc3\xa9", "accent\n", 0o644, true},
		{"dir/raw\xff", "latin1\n", 0o600, true},
		{".loki/state", "private\n", 0o600, true},
		{"target/build.o", "obj\n", 0o644, true},
		{"pkg/target/kept", "kept\n", 0o644, true},
		{"untracked.txt", "u\n", 0o644, false},
		{"ignored.txt", "i\n", 0o644, false},
		{"node_modules/dep/index.js", "x\n", 0o644, false},
		{"pkg/node_modules/dep.js", "y\n", 0o644, false},
		{"pkg/__pycache__/m.pyc", "z\n", 0o644, false},
		{".next/cache", "n\n", 0o644, false},
		{"pkg/.next", "a file, not excluded below the top\n", 0o644, false},
	}
	writeFiles := func(added bool) {
		for _, f := range files {
			if f.added == added {
				write(t, root, f.rel, f.content, f.mode)
			}
		}
	}
	writeFiles(true)
	git(t, root, "add", "-f", ".")
	if err := os.Remove(filepath.Join(root, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	writeFiles(false)
	if err := os.Symlink("tracked.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pkg", filepath.Join(root, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(root, "fifo"), 0o640); err != nil {
		t.Fatal(err)
	}
	sub = filepath.Join(root, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, sub, "init", "-q")
	write(t, sub, "s.txt", "sub\n", 0o644)
	git(t, sub, "add", "s.txt")
	git(t, sub, "commit", "-q", "-m", "s")
	git(t, root, "add", "sub")
	return root, sub
}

func TestMixedTree(t *testing.T) {
	root, sub := buildMixed(t)
	head := git(t, sub, "rev-parse", "HEAD")
	subSum := manifestSum(fileJSON("s.txt", "sub\n", false))
	want := manifestSum(
		fileJSON(".gitignore", "ignored.txt\nnode_modules/\n", false),
		fileJSON(`dir/caf\u00e9`, "accent\n", false),
		fileJSON(`dir/raw\udcff`, "latin1\n", false),
		symlinkJSON("dirlink", "pkg"),
		`{"executable":false,"kind":"other","path":"fifo","size":0}`,
		`{"kind":"missing","path":"gone.txt"}`,
		fileJSON("ignored.txt", "i\n", false),
		symlinkJSON("link", "tracked.txt"),
		fileJSON("pkg/.next", "a file, not excluded below the top\n", false),
		fileJSON("pkg/target/kept", "kept\n", false),
		fileJSON("run.sh", "#!/bin/sh\n", true),
		fmt.Sprintf(`{"head_oid":"%s","index":[{"oid":"%s","stage":0}],"kind":"gitlink","path":"sub","worktree_sha256":"%s"}`, head, head, subSum),
		fileJSON("target/build.o", "obj\n", false), // tracked: the walk exclusion does not apply to the index
		fileJSON("tracked.txt", "tracked\n", false),
		fileJSON("untracked.txt", "u\n", false),
	)
	if got := digestOf(t, root); got != want {
		m, _ := Manifest(context.Background(), root)
		t.Errorf("digest = %s, want %s\nmanifest: %s", got, want, m)
	}
}

// TestOneChangeChangesDigest: any one byte, mode bit, name or link target
// changes the digest; changes inside the exclusions and to metadata the
// manifest does not record do not.
func TestOneChangeChangesDigest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(t *testing.T, root, sub string)
		changes bool
	}{
		{"content byte", func(t *testing.T, r, _ string) { write(t, r, "tracked.txt", "trackee\n", 0o644) }, true},
		{"untracked byte", func(t *testing.T, r, _ string) { write(t, r, "untracked.txt", "v\n", 0o644) }, true},
		{"ignored byte", func(t *testing.T, r, _ string) { write(t, r, "ignored.txt", "j\n", 0o644) }, true},
		{"x bit for other", func(t *testing.T, r, _ string) { chmod(t, r, "tracked.txt", 0o645) }, true},
		{"x bit off", func(t *testing.T, r, _ string) { chmod(t, r, "run.sh", 0o644) }, true},
		{"non-x bit", func(t *testing.T, r, _ string) { chmod(t, r, "tracked.txt", 0o600) }, false},
		{"rename", func(t *testing.T, r, _ string) { rename(t, r, "untracked.txt", "untracked.txu") }, true},
		{"raw name byte", func(t *testing.T, r, _ string) { rename(t, r, "dir/raw\xff", "dir/raw\xfe") }, true},
		{"symlink target", func(t *testing.T, r, _ string) { relink(t, r, "link", "tracked.txu") }, true},
		{"deleted file back", func(t *testing.T, r, _ string) { write(t, r, "gone.txt", "", 0o644) }, true},
		{"new empty file", func(t *testing.T, r, _ string) { write(t, r, "pkg/empty", "", 0o644) }, true},
		{"file named node_modules", func(t *testing.T, r, _ string) { write(t, r, "pkg/venv.txt", "", 0o644) }, true},
		{"submodule content", func(t *testing.T, _, s string) { write(t, s, "s.txt", "sub!\n", 0o644) }, true},
		{"submodule commit", func(t *testing.T, _, s string) { git(t, s, "commit", "-q", "--allow-empty", "-m", "e") }, true},
		{"index only", func(t *testing.T, r, _ string) { git(t, r, "add", "untracked.txt") }, false},
		{"node_modules", func(t *testing.T, r, _ string) { write(t, r, "node_modules/dep/index.js", "changed\n", 0o644) }, false},
		{"nested node_modules", func(t *testing.T, r, _ string) { write(t, r, "pkg/node_modules/new.js", "n\n", 0o644) }, false},
		{"__pycache__", func(t *testing.T, r, _ string) { write(t, r, "pkg/__pycache__/m.pyc", "zz\n", 0o644) }, false},
		{".loki", func(t *testing.T, r, _ string) { write(t, r, ".loki/state", "other\n", 0o600) }, false},
		{"untracked in top target", func(t *testing.T, r, _ string) { write(t, r, "target/new.o", "obj2\n", 0o644) }, false},
		{"tracked in top target", func(t *testing.T, r, _ string) { write(t, r, "target/build.o", "obj2\n", 0o644) }, true},
		{"fifo mode", func(t *testing.T, r, _ string) { chmod(t, r, "fifo", 0o650) }, true},
		{"top .next", func(t *testing.T, r, _ string) { write(t, r, ".next/cache", "m\n", 0o644) }, false},
		{"mtime", func(t *testing.T, r, _ string) {
			old := time.Unix(1e9, 0)
			if err := os.Chtimes(filepath.Join(r, "tracked.txt"), old, old); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, sub := buildMixed(t)
			before := digestOf(t, root)
			tc.change(t, root, sub)
			after := digestOf(t, root)
			if (before != after) != tc.changes {
				t.Errorf("digest changed = %v, want %v (%s -> %s)", before != after, tc.changes, before, after)
			}
		})
	}
}

func chmod(t *testing.T, root, rel string, m os.FileMode) {
	t.Helper()
	if err := os.Chmod(filepath.Join(root, rel), m); err != nil {
		t.Fatal(err)
	}
}

func rename(t *testing.T, root, from, to string) {
	t.Helper()
	if err := os.Rename(filepath.Join(root, from), filepath.Join(root, to)); err != nil {
		t.Fatal(err)
	}
}

func relink(t *testing.T, root, rel, target string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// TestUncheckedOutSubmodule: a gitlink whose directory is empty has no
// head and no worktree digest (and the parent repository's HEAD is not
// mistaken for the submodule's).
func TestUncheckedOutSubmodule(t *testing.T) {
	root, sub := buildMixed(t)
	head := git(t, sub, "rev-parse", "HEAD")
	git(t, root, "commit", "-q", "-m", "all")
	clone := filepath.Join(t.TempDir(), "clone")
	git(t, root, "clone", "-q", root, clone)
	entries := manifestOf(t, clone)
	want := fmt.Sprintf(`{"head_oid":"","index":[{"oid":"%s","stage":0}],"kind":"gitlink","path":"sub","worktree_sha256":""}`, head)
	if !strings.Contains(entries, want) {
		t.Errorf("manifest lacks %s:\n%s", want, entries)
	}
}

func manifestOf(t *testing.T, root string) string {
	t.Helper()
	m, err := Manifest(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	return string(m)
}

// TestLargeFileStreams: a file several buffers long (and not a multiple
// of the buffer) hashes to the SHA-256 of its content.
func TestLargeFileStreams(t *testing.T) {
	root := newRepo(t)
	content := strings.Repeat("0123456789abcdef", (3*bufSize+7)/16) + "tail"
	write(t, root, "big", content, 0o644)
	if got, want := digestOf(t, root), manifestSum(fileJSON("big", content, false)); got != want {
		t.Errorf("digest = %s, want %s", got, want)
	}
}

func TestNotAWorkTreeTop(t *testing.T) {
	testutil.RequireCommand(t, "git")
	root := newRepo(t)
	write(t, root, "sub/f", "f\n", 0o644)
	for _, tc := range []struct{ name, dir string }{
		{"plain directory", t.TempDir()},
		{"subdirectory", filepath.Join(root, "sub")},
		{".git directory", filepath.Join(root, ".git")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d, err := Digest(context.Background(), tc.dir); err != nil || d != "" {
				t.Errorf("Digest = %q, %v; want \"\", nil", d, err)
			}
			if _, err := Manifest(context.Background(), tc.dir); !errors.Is(err, ErrNotWorkTree) {
				t.Errorf("Manifest err = %v, want ErrNotWorkTree", err)
			}
		})
	}
	if _, err := Digest(context.Background(), filepath.Join(root, "absent")); err == nil {
		t.Error("a directory that does not exist must be an error")
	}
}

// TestWorkersDoNotChangeResult: one worker or many, same digest.
func TestWorkersDoNotChangeResult(t *testing.T) {
	root := newRepo(t)
	for i := 0; i < 300; i++ {
		write(t, root, fmt.Sprintf("d%d/f%03d", i%7, i), strings.Repeat("x", i*37), 0o644)
	}
	git(t, root, "add", "d1", "d2")
	var sums []string
	for _, w := range []int{1, 3, 16} {
		d, err := (&Options{Workers: w}).Digest(context.Background(), root)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, d)
	}
	if sums[0] != sums[1] || sums[1] != sums[2] {
		t.Errorf("digests differ by worker count: %v", sums)
	}
}

func TestCancelled(t *testing.T) {
	root := newRepo(t)
	write(t, root, "a", "a", 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Digest(ctx, root); err == nil {
		t.Error("a cancelled digest must fail, not return a partial result")
	}
}

// TestHostileRepository: GIT_DIR in the caller's environment does not
// redirect git, and a core.fsmonitor hook in the repository config is
// never run.
func TestHostileRepository(t *testing.T) {
	root := newRepo(t)
	write(t, root, "a", "hi\n", 0o644)
	git(t, root, "add", "a")
	marker := filepath.Join(t.TempDir(), "ran")
	hook := filepath.Join(t.TempDir(), "hook.sh")
	write(t, filepath.Dir(hook), "hook.sh", "#!/bin/sh\ntouch "+marker+"\n", 0o755)
	git(t, root, "config", "core.fsmonitor", hook)
	t.Setenv("GIT_DIR", t.TempDir())
	t.Setenv("GIT_WORK_TREE", t.TempDir())
	if got, want := digestOf(t, root), manifestSum(fileJSON("a", "hi\n", false)); got != want {
		t.Errorf("digest = %s, want %s", got, want)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the repository's core.fsmonitor hook was executed")
	}
}

func TestParseStage(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		ok   bool
	}{
		{"empty", "", true},
		{"entries", "100644 aa 0\ta\x00160000 bb 0\tsub\x00", true},
		{"tab in name", "100644 aa 0\ta\tb\x00", true},
		{"no tab", "100644 aa 0 a\x00", false},
		{"bad stage", "100644 aa x\ta\x00", false},
		{"empty path", "100644 aa 0\t\x00", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx, err := parseStage([]byte(tc.in))
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if tc.name == "tab in name" && len(idx["a\tb"]) != 1 {
				t.Errorf("path with a tab lost: %v", idx)
			}
		})
	}
}

// TestSizeBound: `truncate -s 1T big` costs the runner nothing; the digest
// must end at once with ErrTooLarge, never read the holes (before: a 1 TiB
// sparse file was hashed until the caller's timeout). A tree exactly at
// the bound still has its digest, one byte over has none.
func TestSizeBound(t *testing.T) {
	root := newRepo(t)
	write(t, root, "a", "12345", 0o644)
	f, err := os.Create(filepath.Join(root, "big"))
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(1 << 40)
	f.Close()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = Digest(ctx, root)
	if !errors.Is(err, ErrTooLarge) || time.Since(start) > 5*time.Second {
		t.Fatalf("1 TiB sparse file: %v after %v, want ErrTooLarge at once", err, time.Since(start))
	}
	os.Remove(filepath.Join(root, "big"))
	write(t, root, "sub/b", "678", 0o644)
	want := manifestSum(fileJSON("a", "12345", false), fileJSON("sub/b", "678", false))
	for _, tc := range []struct {
		max     int64
		tooMuch bool
	}{{8, false}, {7, true}, {-1, false}} {
		got, err := (&Options{MaxBytes: tc.max}).Digest(context.Background(), root)
		switch {
		case tc.tooMuch && !errors.Is(err, ErrTooLarge):
			t.Errorf("MaxBytes %d: %q, %v; want ErrTooLarge", tc.max, got, err)
		case !tc.tooMuch && (err != nil || got != want):
			t.Errorf("MaxBytes %d: %q, %v; want %s", tc.max, got, err, want)
		}
	}
}
