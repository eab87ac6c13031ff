package proof

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
)

const manifestTail = `],"excluded_walk_directories":[".git",".mypy_cache",".pytest_cache",".venv","__pycache__","node_modules","venv"],` +
	`"filesystem_walk_excluded_top_level_directories":[".git",".loki",".next",".nuxt","target"],"version":3}`

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// run executes the binary with a deadline and returns stdout, stderr and
// the exit code.
func run(t *testing.T, cmd *exec.Cmd) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code := testutil.WaitExit(t, cmd, 3*time.Minute)
	return stdout.String(), stderr.String(), code
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.invalid", "-c", "user.name=t"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestDigestCommand(t *testing.T) {
	testutil.RequireCommand(t, "git")
	bin := testutil.Binary(t, "loki-supervise")
	root := t.TempDir()
	git(t, root, "init", "-q")
	if err := os.WriteFile(filepath.Join(root, "a"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, root, "add", "a")
	wantManifest := `{"entries":[{"executable":false,"kind":"file","path":"a","sha256":"` + hexSum([]byte("hi\n")) + `","size":3}` + manifestTail

	out, errOut, code := run(t, exec.Command(bin, "digest", root))
	if code != 0 || out != hexSum([]byte(wantManifest))+"\n" {
		t.Errorf("digest: code %d, out %q, stderr %q", code, out, errOut)
	}
	for _, args := range [][]string{{"digest", "--manifest", root}, {"digest", root, "--manifest"}} {
		out, errOut, code = run(t, exec.Command(bin, args...))
		if code != 0 || out != wantManifest+"\n" {
			t.Errorf("%v: code %d, out %q, stderr %q", args, code, out, errOut)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"subdirectory", []string{"digest", filepath.Join(root, "sub")}, 1, "is not the top level of a git work tree"},
		{"plain directory", []string{"digest", t.TempDir()}, 1, "is not the top level of a git work tree"},
		{"missing", []string{"digest", filepath.Join(root, "nope")}, 2, "is not a directory"},
		{"no argument", []string{"digest"}, 2, "expected exactly one DIR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, exec.Command(bin, tc.args...))
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if code != tc.code || out != "" || len(lines) != 1 || !strings.Contains(errOut, tc.msg) {
				t.Errorf("code %d (want %d), stdout %q, stderr %q (want one line with %q)", code, tc.code, out, errOut, tc.msg)
			}
		})
	}
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestUnreadableEntries runs the digest as uid 65534 over a tree it owns,
// except for a root-only file and a root-only directory: as root nothing is
// unreadable, so the privilege is dropped with setpriv.
func TestUnreadableEntries(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireCommand(t, "git")
	setpriv := testutil.RequireCommand(t, "setpriv")
	bin := testutil.Binary(t, "loki-supervise")

	// Under /tmp itself (1777), not t.TempDir(), whose parents are 0700.
	base, err := os.MkdirTemp("", "loki-unreadable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(base, "loki-supervise")
	copyFile(t, bin, exe, 0o755)
	root := filepath.Join(base, "repo")
	if err := os.MkdirAll(filepath.Join(root, "locked"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, root, "init", "-q")
	files := map[string]string{"a": "a\n", "secret": "s\n", "locked/inner": "i\n"}
	for p, c := range files {
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, root, "add", "a", "locked/inner")
	if out, err := exec.Command("chown", "-R", "65534:65534", root).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v %s", err, out)
	}
	for p, m := range map[string]os.FileMode{"secret": 0o600, "locked": 0o700} {
		full := filepath.Join(root, p)
		if err := os.Chown(full, 0, 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, m); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", exe, "digest", "--manifest", root)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + base}
	out, errOut, code := run(t, cmd)
	want := `{"entries":[` +
		fmt.Sprintf(`{"executable":false,"kind":"file","path":"a","sha256":"%s","size":2},`, hexSum([]byte("a\n"))) +
		`{"kind":"unreadable","path":"locked"},` +
		`{"kind":"unreadable","path":"locked/inner"},` +
		`{"kind":"unreadable","path":"secret"}` + manifestTail + "\n"
	if code != 0 || out != want {
		t.Errorf("code %d stderr %q\ngot  %s\nwant %s", code, errOut, out, want)
	}
}

func TestVerifyProofCommand(t *testing.T) {
	bin := testutil.Binary(t, "loki-supervise")
	receipts := filepath.Join(testutil.ModuleRoot(t), "internal", "proof", "testdata")
	dir := t.TempDir()
	valid, err := os.ReadFile(filepath.Join(receipts, "receipt.valid.json"))
	if err != nil {
		t.Fatal(err)
	}
	tampered := filepath.Join(dir, "tampered.json")
	if err := os.WriteFile(tampered, bytes.Replace(valid, []byte("34500"), []byte("34501"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		file   string
		code   int
		stdout string // substring; "" means empty output
		stderr string
	}{
		{"valid", filepath.Join(receipts, "receipt.valid.json"), 0, `"ok":true`, ""},
		{"tampered", tampered, 1, `"hash_ok":false`, ""},
		{"headline flipped", filepath.Join(receipts, "receipt.flipped.json"), 1, `"headline_consistent":false`, ""},
		{"hash missing", filepath.Join(receipts, "receipt.nohash.json"), 1, `"reason":"verification.hash is missing"`, ""},
		{"incoherent cost", filepath.Join(receipts, "receipt.cost.json"), 1, `"cost_coherent":false`, ""},
		// A receipt that cannot be verified still prints its one object.
		{"non-object root", filepath.Join(receipts, "receipt.array.json"), 2, `"ok":false,"reason":"receipt not verified: `, "the root is not a JSON object"},
		{"malformed", garbage, 2, `"ok":false,"reason":"receipt not verified: `, "not valid JSON"},
		{"unreadable", filepath.Join(dir, "absent.json"), 2, `"ok":false,"reason":"receipt unreadable: `, "cannot read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, "verify-proof", tc.file)
			cmd.Env = []string{"PATH=" + t.TempDir()} // no gpg, no signature: n/a either way
			out, errOut, code := run(t, cmd)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
			if (tc.stdout == "") != (out == "") || !strings.Contains(out, tc.stdout) {
				t.Errorf("stdout %q, want it to contain %q", out, tc.stdout)
			}
			if tc.stderr != "" && (!strings.Contains(errOut, tc.stderr) || strings.Count(errOut, "\n") != 1) {
				t.Errorf("stderr %q, want one line containing %q", errOut, tc.stderr)
			}
			if tc.stderr == "" && errOut != "" {
				t.Errorf("unexpected stderr %q", errOut)
			}
		})
	}
}
