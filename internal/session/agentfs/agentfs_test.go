package agentfs

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestRecognise(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want []string
	}{
		{[]string{"claude"}, []string{"claude"}},
		{[]string{"/usr/bin/node", "/x/node_modules/@zed-industries/claude-agent-acp/dist/index.js"}, []string{"claude"}},
		{[]string{"npx", "@google/gemini-cli", "--acp"}, []string{"gemini", "npm"}},
		{[]string{"sh", "-c", "exec codex-acp"}, []string{"codex"}},
		{[]string{"/opt/codex/bin/codex", "exec"}, []string{"codex"}},
		{[]string{"sh", "-c", "echo hi"}, nil},
		{[]string{"claudette"}, nil},
	} {
		if got := Recognise(tc.argv); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Recognise(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

func touch(t *testing.T, p string, dir bool) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	if dir {
		err = os.Mkdir(p, 0o755)
	} else {
		err = os.WriteFile(p, nil, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func paths(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Path)
	}
	return out
}

func TestResolve(t *testing.T) {
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	touch(t, filepath.Join(home, ".gemini"), true)
	touch(t, filepath.Join(home, ".bashrc"), false)
	touch(t, filepath.Join(proj, ".git", "hooks"), true)
	touch(t, filepath.Join(proj, ".git", "config"), false)
	touch(t, filepath.Join(proj, ".mcp.json"), false)
	j := func(rel string) string { return filepath.Join(home, rel) }

	t.Run("claude named, gemini present", func(t *testing.T) {
		p := Resolve(Input{Home: home, Writable: []string{proj}, Argv: []string{"claude"}})
		if want := []string{j(".claude"), j(".claude.json"), j(".gemini")}; !reflect.DeepEqual(paths(p.State), want) {
			t.Errorf("state %q, want %q", paths(p.State), want)
		}
		want := []string{j(".claude/settings.json"), j(".claude/settings.local.json"), j(".gemini/extensions"), j(".gemini/settings.json"),
			filepath.Join(proj, ".git/config"), filepath.Join(proj, ".git/hooks"), filepath.Join(proj, ".mcp.json")}
		if got := paths(p.Protected); !reflect.DeepEqual(got, want) {
			t.Errorf("protected %q, want %q", got, want)
		}
		// .bashrc is not below a writable path: read-only already.
	})
	t.Run("HOME writable: shell files too, bash_profile not made", func(t *testing.T) {
		p := Resolve(Input{Home: home, Writable: []string{home}, Explicit: []string{home}, NoState: true})
		ro := map[string]bool{}
		for _, e := range p.Protected {
			ro[e.Path] = true
			if e.Path == j(".bash_profile") && !(e.Missing && e.NoPlaceholder) {
				t.Errorf("~/.bash_profile: %+v, want missing without placeholder", e)
			}
		}
		for _, want := range []string{j(".bashrc"), j(".ssh"), j(".gitconfig"), j(".gemini/settings.json")} {
			if !ro[want] {
				t.Errorf("%s not protected: %q", want, paths(p.Protected))
			}
		}
		for _, r := range p.ReadOnly() {
			if r == j(".bash_profile") {
				t.Error("a path without placeholder would be mounted")
			}
		}
	})
	t.Run("--write of a protected path opts in", func(t *testing.T) {
		hooks := filepath.Join(proj, ".git/hooks")
		p := Resolve(Input{Home: home, Writable: []string{proj, hooks}, Explicit: []string{hooks}, NoState: true})
		for _, r := range p.ReadOnly() {
			if r == hooks {
				t.Errorf("%s read-only despite --write", hooks)
			}
		}
	})
	t.Run("no state", func(t *testing.T) {
		if p := Resolve(Input{Home: home, Argv: []string{"claude"}, NoState: true}); len(p.State) != 0 || len(p.Protected) != 0 {
			t.Errorf("state %q protected %q, want none", paths(p.State), paths(p.Protected))
		}
	})
}

func TestPrepare(t *testing.T) {
	home := t.TempDir()
	p := Resolve(Input{Home: home, Argv: []string{"claude"}})
	if err := p.Prepare(); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{".claude.json": "{}", ".claude/settings.json": "{}"} {
		b, err := os.ReadFile(filepath.Join(home, path))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", path, b, err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(home, ".claude")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("~/.claude: %v %v, want a 0700 dir", fi, err)
	}
	if ro := p.ReadOnly(); len(ro) != 2 {
		t.Errorf("read-only %q, want the two settings files", ro)
	}
}
