//go:build linux

package confine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/loki-sh/loki/internal/testutil/backends"
)

// agentProbe: $1 the project. Writes the agent's state, then tries each
// protected path; $0 is "claude", which names the agent.
const agentProbe = `
w() { if (printf "$3" >> "$1") 2>/dev/null; then echo "$2=written"; else echo "$2=refused"; fi; }
w "$HOME/.claude/history.jsonl" state "turn\n"
w "$HOME/.claude.json" claudejson ""
w "$1/.git/hooks/pre-commit" hook "#!/bin/sh\n"
w "$1/.git/config" gitconfig "[core]\n"
w "$1/.mcp.json" mcp " "
w "$HOME/.claude/settings.json" settings " "
w "$1/src.go" cwd "x"
echo "history=$(cat "$HOME/.claude/history.jsonl" | wc -l)"
`

// TestAgentFiles: the agent's state is writable and kept from one
// session to the next (~/.claude, and ~/.claude.json made when the
// command names Claude Code), while the paths that run code later stay
// read-only inside the writable project and state (git hooks and
// config, the project's MCP servers, Claude Code's settings) unless
// --write names them. Before: the state write was refused (EROFS) and
// the hook, git config and .mcp.json were written.
func TestAgentFiles(t *testing.T) {
	for _, b := range namespaceRows() {
		uid := peerUID(b)
		t.Run(b.Name, func(t *testing.T) {
			home := homeIn(t, "/var/tmp", uid, 0o700)
			proj := ownedDir(t, filepath.Join(home, "proj"), uid, 0o755)
			ownedDir(t, filepath.Join(proj, ".git"), uid, 0o755)
			ownedDir(t, filepath.Join(proj, ".git", "hooks"), uid, 0o755)
			writeOwned(t, filepath.Join(proj, ".git", "config"), "", uid)
			writeOwned(t, filepath.Join(proj, ".mcp.json"), "{}", uid)
			env := []string{"HOME=" + home}
			run := func(flags ...string) map[string]string {
				t.Helper()
				code, out, stderr := sessionEnv(t, b, env, append([]string{"--cwd", proj}, flags...), "sh", "-c", agentProbe, "claude", proj)
				if code != 0 {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
				return results(out)
			}
			// --print-policy names the state and the protected paths, and
			// runs nothing.
			code, out, stderr := sessionEnv(t, b, env, []string{"--cwd", proj, "--print-policy", "--json"}, "claude")
			var view struct {
				Agents []string                `json:"agents"`
				W      []struct{ Path string } `json:"writable"`
				R      []struct{ Path string } `json:"read_only"`
			}
			if err := json.Unmarshal([]byte(out), &view); code != 0 || err != nil {
				t.Fatalf("--print-policy: exit %d, %v, stderr %q", code, err, stderr)
			}
			has := func(list []struct{ Path string }, p string) bool {
				for _, e := range list {
					if e.Path == p {
						return true
					}
				}
				return false
			}
			if !has(view.W, filepath.Join(home, ".claude")) || !has(view.W, filepath.Join(home, ".claude.json")) || !has(view.R, filepath.Join(proj, ".git", "hooks")) {
				t.Errorf("--print-policy: %s", out)
			}
			if _, err := os.Stat(filepath.Join(home, ".claude.json")); err == nil {
				t.Error("--print-policy made the state it only had to show")
			}
			r := run()
			for k, v := range map[string]string{"state": "written", "claudejson": "written", "cwd": "written",
				"hook": "refused", "gitconfig": "refused", "mcp": "refused", "settings": "refused", "history": "1"} {
				if r[k] != v {
					t.Errorf("first session: %s=%q, want %q (%v)", k, r[k], v, r)
				}
			}
			if _, err := os.Stat(filepath.Join(proj, ".git", "hooks", "pre-commit")); err == nil {
				t.Error("the agent planted a git hook on the host")
			}
			if b, _ := os.ReadFile(filepath.Join(proj, ".git", "config")); len(b) != 0 {
				t.Errorf("the agent changed .git/config: %q", b)
			}
			fi, err := os.Stat(filepath.Join(home, ".claude.json"))
			if err != nil || int(fi.Sys().(*syscall.Stat_t).Uid) != uid {
				t.Errorf("~/.claude.json not made for the user %d: %v", uid, err)
			}
			// The second session finds the first one's state, and --write
			// of a protected path opts in.
			r = run("--write", filepath.Join(proj, ".git", "hooks"))
			for k, v := range map[string]string{"state": "written", "history": "2", "hook": "written", "gitconfig": "refused"} {
				if r[k] != v {
					t.Errorf("second session: %s=%q, want %q (%v)", k, r[k], v, r)
				}
			}
		})
	}
}

// TestProtectedPathsContainers: on oci and docker, where a --write binds
// the host's project into the container, its git hooks and config stay
// read-only there too. Before, the hook was written on every runtime.
func TestProtectedPathsContainers(t *testing.T) {
	for _, b := range []backend{backends.Get("oci-crun"), backends.Get("oci-runc"), backends.Get("docker")} {
		t.Run(b.Name, func(t *testing.T) {
			proj := hostDir(t, 0)
			ownedDir(t, filepath.Join(proj, ".git", "hooks"), 0, 0o755)
			writeOwned(t, filepath.Join(proj, ".git", "config"), "", 0)
			flags := []string{"--write", proj}
			if b.Name == "oci-runc" {
				flags = append(flags, "--userns", "host") // runc 1.1 cannot idmap a writable bind
			}
			probe := `cd "$1"
w() { if (printf x >> "$1") 2>/dev/null; then echo "$2=written"; else echo "$2=refused"; fi; }
w .git/hooks/pre-commit hook
w .git/config gitconfig
w src cwd`
			code, out, stderr := session(t, b, flags, "sh", "-c", probe, "probe", proj)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			wantResults(t, out, map[string]string{"hook": "refused", "gitconfig": "refused", "cwd": "written"})
			if _, err := os.Stat(filepath.Join(proj, ".git", "hooks", "pre-commit")); err == nil {
				t.Error("the agent planted a git hook on the host")
			}
		})
	}
}
