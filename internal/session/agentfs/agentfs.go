package agentfs

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/loki-sh/loki/internal/session/isolation/mounts"
)

// Agent is one known agent: the names its commands and npm packages go
// by, and its files relative to HOME.
type Agent struct {
	Name string
	// Commands are argv words that name it (a command's base name, or
	// part of an npm package's path).
	Commands []string
	// State is where it keeps login, history, settings and caches.
	State []File
	// Protected are its files that configure code it runs later (hooks,
	// MCP servers), relative to HOME, and Workspace those relative to a
	// writable project dir.
	Protected, Workspace []File
}

// File is one path of a table, relative to HOME (or to a workspace).
type File struct {
	Rel string
	Dir bool
	Why string
}

// Agents is the built-in table. Claude Code keeps its live state (OAuth
// account, per-project history, counters) and its user-scope MCP servers
// in the one file ~/.claude.json, which it rewrites on every start: it
// must stay writable, so its MCP servers are not protected (docs/
// confinement.md); its hooks live in ~/.claude/settings.json, which it
// only writes when the user changes a setting, and are protected.
var Agents = []Agent{
	{
		Name:     "claude",
		Commands: []string{"claude", "claude-agent-acp", "claude-code-acp", "claude-code"},
		State: []File{
			{".claude", true, "Claude Code's login, history, todos, caches"},
			{".claude.json", false, "Claude Code's live state (account, projects, MCP servers: rewritten on every start)"},
		},
		Protected: []File{
			{".claude/settings.json", false, "Claude Code's hooks and permissions"},
			{".claude/settings.local.json", false, "Claude Code's hooks and permissions"},
		},
		Workspace: []File{
			{".claude/settings.json", false, "Claude Code's project hooks"},
			{".claude/settings.local.json", false, "Claude Code's project hooks"},
			{".mcp.json", false, "the project's MCP servers"},
		},
	},
	{
		Name:     "gemini",
		Commands: []string{"gemini", "gemini-cli"},
		State:    []File{{".gemini", true, "Gemini CLI's login, history, caches"}},
		Protected: []File{
			{".gemini/settings.json", false, "Gemini CLI's MCP servers, hooks, tool commands"},
			{".gemini/extensions", true, "Gemini CLI's extensions (code)"},
		},
		Workspace: []File{{".gemini/settings.json", false, "Gemini CLI's project MCP servers and hooks"}},
	},
	{
		Name:      "codex",
		Commands:  []string{"codex", "codex-acp"},
		State:     []File{{".codex", true, "Codex's login, sessions, logs"}},
		Protected: []File{{".codex/config.toml", false, "Codex's MCP servers and notify command"}},
		Workspace: []File{{".codex/config.toml", false, "Codex's project MCP servers"}},
	},
	{
		Name:     "npm",
		Commands: []string{"npx", "npm"},
		State:    []File{{".npm", true, "npm's cache (npx fetches the agent there)"}},
	},
}

// Protected are the files of HOME that run as code later whatever the
// agent: shell startup files, ssh and gpg (keys, and commands such as
// ProxyCommand), git's config (hooks path, aliases, filters), npm's.
var Protected = []File{
	{".bashrc", false, "shell startup file"},
	{".bash_profile", false, "shell startup file"},
	{".bash_login", false, "shell startup file"},
	{".bash_logout", false, "shell startup file"},
	{".profile", false, "shell startup file"},
	{".zshenv", false, "shell startup file"},
	{".zshrc", false, "shell startup file"},
	{".zprofile", false, "shell startup file"},
	{".zlogin", false, "shell startup file"},
	{".config/fish", true, "shell startup files"},
	{".ssh", true, "ssh keys and config (ProxyCommand runs code)"},
	{".gnupg", true, "gpg keys and config"},
	{".gitconfig", false, "git config (hooks path, aliases, filters run code)"},
	{".config/git", true, "git config (hooks path, aliases, filters run code)"},
	{".npmrc", false, "npm config (script-shell runs code)"},
	{".config/loki", true, "loki's own policy file (the next session's confinement)"},
}

// Workspace are the files of a writable project dir that git runs as
// code later: .git/hooks run on `git commit`, .git/config can name
// another hooks path, a pager, a filter.
var Workspace = []File{
	{".git/hooks", true, "git hooks run on the next commit"},
	{".git/config", false, "git config (hooks path, filters run code)"},
	{".envrc", false, "direnv runs it on cd"},
	{".loki/policy.toml", false, "the project's loki policy (the next session's confinement)"},
}

// noPlaceholder are protected files whose mere presence changes what
// runs: an empty ~/.bash_profile makes bash skip ~/.profile.
var noPlaceholder = map[string]bool{".bash_profile": true, ".bash_login": true}

// Recognise returns the agents argv names: a word's base name (without
// an extension), or an npm package path in it.
func Recognise(argv []string) []string {
	var out []string
	for _, a := range Agents {
		if names(argv, a.Commands) {
			out = append(out, a.Name)
		}
	}
	return out
}

func names(argv, commands []string) bool {
	for _, w := range argv {
		for _, f := range strings.FieldsFunc(w, func(r rune) bool { return r == '/' || r == ' ' || r == '@' || r == ';' || r == '&' || r == '|' }) {
			f = strings.TrimSuffix(strings.TrimSuffix(f, ".js"), ".mjs")
			for _, c := range commands {
				if f == c {
					return true
				}
			}
		}
	}
	return false
}

// Input is what a plan is made from.
type Input struct {
	// Home is the agent's HOME ("" or / for none: no state, no HOME
	// files protected).
	Home string
	// Writable are the paths the agent may write besides state (its cwd
	// and every --write), Explicit those named by --write: a protected
	// path named there is the user's opt-in.
	Writable, Explicit []string
	// Argv is the agent's command.
	Argv []string
	// NoState: no agent state is made writable (--agent-state none).
	NoState bool
}

// Entry is one path of a plan, with why it is there.
type Entry struct {
	Path string `json:"path"`
	Why  string `json:"why"`
	Dir  bool   `json:"dir,omitempty"`
	// Missing: not on the host. State is created; a protected path
	// gets an empty placeholder unless NoPlaceholder.
	Missing       bool `json:"missing,omitempty"`
	NoPlaceholder bool `json:"no_placeholder,omitempty"`
	// OptIn: a protected path --write names, left writable.
	OptIn bool `json:"opt_in,omitempty"`
}

// Plan is the agent-file part of a session's filesystem.
type Plan struct {
	Agents []string `json:"agents"`
	// State are made writable (created when Missing).
	State []Entry `json:"state"`
	// Protected are read-only inside a writable path (OptIn: left
	// writable).
	Protected []Entry `json:"protected"`
}

// Resolve makes the plan: state of every known agent that exists, and
// of the agents argv names; protected paths below a writable path or a
// state dir.
func Resolve(in Input) Plan {
	plan := Plan{Agents: Recognise(in.Argv)}
	recognised := map[string]bool{}
	for _, n := range plan.Agents {
		recognised[n] = true
	}
	home := in.Home
	if home == "/" || !filepath.IsAbs(home) {
		home = ""
	}
	writable := append([]string(nil), in.Writable...)
	if home != "" && !in.NoState {
		for _, a := range Agents {
			for _, f := range a.State {
				p := filepath.Join(home, f.Rel)
				_, err := os.Lstat(p)
				if err != nil && !recognised[a.Name] {
					continue
				}
				if mounts.UnderAny(p, in.Writable) {
					continue // writable already
				}
				plan.State = append(plan.State, Entry{Path: p, Why: f.Why, Dir: f.Dir, Missing: err != nil})
				writable = append(writable, p)
			}
		}
	}
	seen := map[string]bool{}
	add := func(p string, f File) {
		if seen[p] || !mounts.UnderAny(p, writable) {
			return
		}
		seen[p] = true
		e := Entry{Path: p, Why: f.Why, Dir: f.Dir, OptIn: named(p, in.Explicit)}
		if fi, err := os.Lstat(p); err != nil {
			e.Missing = true
			// A placeholder needs its dir: one of a state dir about to
			// be made, or one that exists.
			e.NoPlaceholder = noPlaceholder[f.Rel] || !exists(filepath.Dir(p)) && !isState(filepath.Dir(p), plan.State)
		} else if fi.Mode()&os.ModeSymlink != 0 {
			return // a link is covered at its target's path, if protected there
		}
		plan.Protected = append(plan.Protected, e)
	}
	if home != "" {
		for _, f := range Protected {
			add(filepath.Join(home, f.Rel), f)
		}
		for _, a := range Agents {
			for _, f := range a.Protected {
				add(filepath.Join(home, f.Rel), f)
			}
		}
	}
	for _, w := range in.Writable {
		for _, f := range Workspace {
			if f.Rel == ".git/hooks" || f.Rel == ".git/config" {
				if fi, err := os.Lstat(filepath.Join(w, ".git")); err != nil || !fi.IsDir() {
					continue
				}
			}
			if p := filepath.Join(w, f.Rel); exists(p) {
				add(p, f)
			}
		}
		for _, a := range Agents {
			for _, f := range a.Workspace {
				// Only what exists: a placeholder in a project would
				// show in git status (docs/confinement.md).
				if p := filepath.Join(w, f.Rel); exists(p) {
					add(p, f)
				}
			}
		}
	}
	sort.SliceStable(plan.Protected, func(i, j int) bool { return plan.Protected[i].Path < plan.Protected[j].Path })
	return plan
}

// ReadOnly are the protected paths a backend mounts read-only: those
// not opted in that exist (after Prepare, placeholders do).
func (p Plan) ReadOnly() []string {
	var out []string
	for _, e := range p.Protected {
		if !e.OptIn && (!e.Missing || !e.NoPlaceholder) {
			out = append(out, e.Path)
		}
	}
	return out
}

// Writable are the state paths.
func (p Plan) Writable() []string {
	var out []string
	for _, e := range p.State {
		out = append(out, e.Path)
	}
	return out
}

func isState(p string, state []Entry) bool {
	for _, e := range state {
		if e.Path == p && e.Dir {
			return true
		}
	}
	return false
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func named(p string, explicit []string) bool {
	for _, e := range explicit {
		if e == p {
			return true
		}
	}
	return false
}
