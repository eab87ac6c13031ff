package boundary

import "slices"

// Workspace is a Boundary together with the one workspace and spec a build
// is confined to. Get one from ForWorkspace.
type Workspace struct {
	*Boundary
	workspace string
	spec      string
}

// Dir is the resolved workspace directory (the build's only writable tree
// besides the runtime write paths).
func (w *Workspace) Dir() string { return w.workspace }

// Spec is the resolved spec file the build reads ("" for a run).
func (w *Workspace) Spec() string { return w.spec }

// ForWorkspace validates the boundary and places workspace in it: the
// workspace must lie strictly inside one of the workspace roots and must
// neither contain nor sit inside the engine source.
func ForWorkspace(lookup Lookup, workspace, runSh, spec string) (*Workspace, error) {
	b, err := Load(lookup, runSh)
	if err != nil {
		return nil, err
	}
	ws, err := requiredPath(ArgWorkspace, workspace, true, lookup)
	if err != nil {
		return nil, err
	}
	sp, err := requiredPath(ArgSpec, spec, false, lookup)
	if err != nil {
		return nil, err
	}
	return place(b, ws, sp)
}

// ForRun is ForWorkspace for a `run`, which has no engine and no spec:
// the same boundary, the workspace placed in it the same way, and an
// empty EngineSource and Spec.
func ForRun(lookup Lookup, workspace string) (*Workspace, error) {
	b, err := load(lookup, "")
	if err != nil {
		return nil, err
	}
	ws, err := requiredPath(ArgWorkspace, workspace, true, lookup)
	if err != nil {
		return nil, err
	}
	return place(b, ws, "")
}

func place(b *Boundary, ws, spec string) (*Workspace, error) {
	inside := slices.ContainsFunc(b.workspaceRoots, func(root string) bool {
		return ws != root && Within(ws, root)
	})
	if !inside {
		return nil, invalid(ArgWorkspace, "%s is not strictly inside any entry of %s", ws, EnvWorkspaceRoots)
	}
	if b.engineSource != "" && (Within(ws, b.engineSource) || Within(b.engineSource, ws)) {
		return nil, invalid(ArgWorkspace, "%s overlaps the engine source %s (the directory two levels above run.sh)",
			ws, b.engineSource)
	}
	return &Workspace{Boundary: b, workspace: ws, spec: spec}, nil
}

// RequireDir validates raw the way every configured directory is validated
// (absolute, existing, not the root) and returns it resolved; name is what
// an error blames.
func RequireDir(lookup Lookup, name, raw string) (string, error) {
	return requiredPath(name, raw, true, lookup)
}
