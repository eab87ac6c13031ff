//go:build linux

package confine

import (
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
	"github.com/loki-sh/loki/internal/testutil/backends"
)

// TestAgentToolsUnderSyscallPolicy guards what agents run against the
// session's syscall policy (no set-uid modes, no xattrs, no openat2, no
// io_uring): git makes a repository and a commit, node writes a file,
// npm and pip answer, python copies a file with its metadata (shutil
// passes over the refused xattrs), in a default session.
func TestAgentToolsUnderSyscallPolicy(t *testing.T) {
	for _, tool := range []string{"git", "node", "npm", "python3"} {
		testutil.RequireCommand(t, tool)
	}
	script := `set -e
cd /tmp && mkdir repo && cd repo
git init -q && echo x > f && git add f
git -c user.name=loki -c user.email=loki@loki.invalid commit -q -m first
echo "git=$(git log --oneline | wc -l)"
node -e 'require("fs").writeFileSync("n.txt", "x"); console.log("node=ok")'
echo "npm=$(npm --version >/dev/null 2>&1 && echo ok || echo failed)"
python3 -c 'import shutil; shutil.copy2("f", "g"); print("python=ok")'
if command -v pip >/dev/null; then echo "pip=$(pip --version >/dev/null 2>&1 && echo ok || echo failed)"; else echo pip=ok; fi
`
	code, out, stderr := session(t, backends.Get("namespace"), nil, "sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	r := results(out)
	for k, v := range map[string]string{"git": "1", "node": "ok", "npm": "ok", "python": "ok", "pip": "ok"} {
		if strings.TrimSpace(r[k]) != v {
			t.Errorf("%s=%q, want %q (stderr %q)", k, r[k], v, stderr)
		}
	}
}

// TestNestedSandbox: agents sandbox their tools with bubblewrap, which
// needs a user namespace of its own (with its network namespace: Codex
// and srt pass --unshare-net); the policy keeps both. A peer that is
// uid 0 (the default as root) is refused by the kernel itself: since
// Linux 5.12, mapping uid 0 into a new user namespace needs CAP_SETFCAP
// (docs/confinement.md). A fresh /proc (--proc) is refused too: the
// session's own has masked files, so the kernel will not mount a
// more revealing one (as under Docker); Codex retries without it.
func TestNestedSandbox(t *testing.T) {
	bwrap := testutil.RequireCommand(t, "bwrap")
	ns, nsUser := backends.Get("namespace"), backends.Get("namespace-userns")
	for _, tc := range []struct {
		name  string
		b     backend
		flags []string
		ok    bool
	}{
		{"user", ns, []string{"--user", "65534:65534"}, true},
		{"unprivileged supervisor", nsUser, nil, true},
		{"root peer", ns, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := session(t, tc.b, tc.flags, bwrap, "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "sh", "-c", "echo inside=$(id -u)")
			switch {
			case tc.ok && (code != 0 || !strings.Contains(out, "inside=")):
				t.Errorf("exit %d, stdout %q, stderr %q: want bwrap to run", code, out, stderr)
			case !tc.ok && (code == 0 || !strings.Contains(stderr, "uid map")):
				t.Errorf("exit %d, stderr %q: want the kernel's refusal of the uid map", code, stderr)
			}
		})
	}
}
