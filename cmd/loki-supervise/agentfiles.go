package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/session/agentfs"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/isolation/namespace"
	"github.com/loki-sh/loki/internal/session/isolation/none"
	"github.com/loki-sh/loki/internal/session/seccomp"
)

// resolved is p with symlinks resolved when it exists.
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// agentFiles plans the agent's state and protected files for this
// session (agentfs).
func agentFiles(state, isolation, cwd string, env map[string]string, argv []string, p confine.Policy) (agentfs.Plan, error) {
	if state != "auto" && state != "none" {
		return agentfs.Plan{}, usage("--agent-state %q: want auto or none", state)
	}
	if viewFS(isolation, p) == confine.FSHost {
		return agentfs.Plan{}, nil
	}
	in := agentfs.Input{Argv: argv, NoState: state == "none" || isolation != namespace.Name}
	for _, w := range p.Write {
		in.Writable = append(in.Writable, w)
		in.Explicit = append(in.Explicit, w)
	}
	home := os.Getenv("HOME")
	if isolation == namespace.Name {
		home = env["HOME"]
		if cwd != "/" {
			in.Writable = append([]string{resolved(cwd)}, in.Writable...)
		}
	}
	if filepath.IsAbs(home) {
		in.Home = resolved(home)
	}
	return agentfs.Resolve(in), nil
}

// viewFS is the --fs the session runs with.
func viewFS(isolation string, p confine.Policy) confine.FS {
	switch {
	case p.FS != "":
		return p.FS
	case isolation == none.Name:
		return confine.FSHost
	}
	return confine.FSConfined
}

// policyView is what --print-policy (and doctor) show of a session
// planned by agentFiles; a session that runs needs none of it.
func policyView(isolation, cwd string, p confine.Policy, plan agentfs.Plan) confine.View {
	view := confine.View{Backend: isolation, FS: viewFS(isolation, p), Syscalls: []confine.SyscallRule{}}
	if isolation != none.Name {
		for _, d := range seccomp.Summary() {
			view.Syscalls = append(view.Syscalls, confine.SyscallRule{Calls: d.Calls, Errno: d.Errno, Why: d.Why})
		}
	}
	if view.FS == confine.FSHost {
		view.Notes = append(view.Notes, "--fs host: the host's files as the agent's uid may use them; nothing is protected")
		return view
	}
	if isolation == namespace.Name && cwd != "/" {
		view.Writable = append(view.Writable, confine.PathRule{Path: cwd, Why: "the session's cwd (the workspace)"})
	}
	view.Agents = plan.Agents
	for _, w := range p.Write {
		view.Writable = append(view.Writable, confine.PathRule{Path: w, Why: "--write"})
	}
	for _, e := range plan.State {
		view.Writable = append(view.Writable, confine.PathRule{Path: e.Path, Why: "agent state, kept across sessions: " + e.Why, Create: e.Missing})
	}
	switch isolation {
	case namespace.Name:
		view.ReadOnly = append(view.ReadOnly, confine.PathRule{Path: "/", Why: "every other host path: each mount read-only"})
		view.Hidden = append(view.Hidden,
			confine.PathRule{Path: "/tmp", Why: "a private tmpfs (a cwd, --write or HOME under /tmp is shown again)"},
			confine.PathRule{Path: "/dev", Why: "a minimal /dev (null zero full random urandom tty, own pts and shm)"},
			confine.PathRule{Path: "/run", Why: "the host's unix sockets under /run are covered (connect(2) ignores read-only)"})
	default:
		view.ReadOnly = append(view.ReadOnly, confine.PathRule{Path: "/", Why: "the container's root filesystem"})
		view.Notes = append(view.Notes, "agent state is not bound: the agent's HOME is the container's; --write a host state dir (e.g. ~/.claude) to keep it")
	}
	for _, e := range plan.Protected {
		r := confine.PathRule{Path: e.Path, Why: "protected: " + e.Why}
		switch {
		case e.OptIn:
			r.Why = "--write opts in to a protected path: " + e.Why
			view.Writable = append(view.Writable, r)
			continue
		case e.Missing && e.NoPlaceholder:
			r.Uncovered = true
		case e.Missing:
			r.Create = true
		}
		view.ReadOnly = append(view.ReadOnly, r)
	}
	for _, h := range p.Hide {
		view.Hidden = append(view.Hidden, confine.PathRule{Path: h, Why: "--hide"})
	}
	for _, m := range confine.MaskedPaths {
		view.Hidden = append(view.Hidden, confine.PathRule{Path: m, Why: "kernel interface (as Docker's default)"})
	}
	view.Hidden = append(view.Hidden, confine.PathRule{Path: "(control root)", Why: "other sessions' leases"})
	return view
}

// printPolicy writes the view, text or JSON.
func printPolicy(c *cli.Context, v confine.View) error {
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	v.Text(c.App.Writer)
	return nil
}

// applyAgentFiles makes what the plan needs on the host and gives the
// state paths and protected paths to the policy (each backend applies
// them from there).
func applyAgentFiles(plan agentfs.Plan, p *confine.Policy) error {
	if err := plan.Prepare(); err != nil {
		return notLaunched(fmt.Errorf("%w; or run with --agent-state none", err))
	}
	p.Write = append(p.Write, plan.Writable()...)
	p.Protect = plan.ReadOnly()
	return nil
}
