package boundary

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/loki-sh/loki/internal/pycompat"
)

// The environment variables that describe the boundary.
const (
	EnvProtectedRoot     = "LOKI_HOST_PROTECTED_ROOT"
	EnvWorkspaceRoots    = "LOKI_WORKSPACE_ROOTS"
	EnvRuntimeReadPaths  = "LOKI_HOST_RUNTIME_READ_PATHS"
	EnvRuntimeWritePaths = "LOKI_HOST_RUNTIME_WRITE_PATHS"
	EnvChildPath         = "LOKI_HOST_CHILD_PATH"
	EnvReservedPorts     = "LOKI_HOST_RESERVED_PORTS"
)

// Names of the arguments (not variables) that are validated the same way.
const (
	ArgRunSh         = "run-sh"
	ArgWorkspaceRoot = "workspace-root"
	ArgWorkspace     = "workspace"
	ArgSpec          = "spec"
)

// systemReadPaths are readable and executable in every profile, when they
// exist on this machine (macOS layout; on Linux only /usr, /bin, /sbin).
var systemReadPaths = []string{
	"/System", "/usr", "/bin", "/sbin", "/Library/Apple",
	"/private/etc", "/private/var/db/timezone", "/private/var/select",
}

// systemChildPaths must appear in LOKI_HOST_CHILD_PATH (after resolution)
// so that a runner always finds the base commands.
var systemChildPaths = []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin"}

// Lookup reads one environment variable, as os.LookupEnv does.
type Lookup func(key string) (string, bool)

// Environ reads the process environment.
func Environ(key string) (string, bool) { return os.LookupEnv(key) }

// Enabled reports whether a switch variable is on: 1, true, yes or on,
// in any case, surrounding blanks ignored.
func Enabled(lookup Lookup, name string) bool {
	v, _ := lookup(name)
	switch strings.ToLower(pycompat.Strip(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// Boundary is a validated host boundary. The zero value is not valid; get
// one from Load.
type Boundary struct {
	workspaceRoots    []string
	engineSource      string
	protectedRoot     string
	runtimeReadPaths  []string
	runtimeWritePaths []string
	systemReadPaths   []string
	childPath         []string
	ports             []int
}

// WorkspaceRoots are the directories under which workspaces may live.
func (b *Boundary) WorkspaceRoots() []string { return slices.Clone(b.workspaceRoots) }

// EngineSource is the directory two levels above run.sh (the engine
// checkout), readable but never writable by the build; "" for a run.
func (b *Boundary) EngineSource() string { return b.engineSource }

// ProtectedRoot is the directory tree only workspaces may enter.
func (b *Boundary) ProtectedRoot() string { return b.protectedRoot }

// RuntimeReadPaths are extra read-only (and executable) paths.
func (b *Boundary) RuntimeReadPaths() []string { return slices.Clone(b.runtimeReadPaths) }

// RuntimeWritePaths are extra writable directories.
func (b *Boundary) RuntimeWritePaths() []string { return slices.Clone(b.runtimeWritePaths) }

// SystemReadPaths are the system directories present on this machine,
// resolved, in the fixed order of the reference (duplicates kept).
func (b *Boundary) SystemReadPaths() []string { return slices.Clone(b.systemReadPaths) }

// ChildPath is the runner's PATH, resolved and de-duplicated.
func (b *Boundary) ChildPath() []string { return slices.Clone(b.childPath) }

// ReservedPorts are the TCP ports a build may neither bind nor connect to,
// in configured order.
func (b *Boundary) ReservedPorts() []int { return slices.Clone(b.ports) }

// Load validates the boundary described by the environment for the engine
// whose entry point is runSh. The checks run in the reference's order, so
// the first error reported is the same one.
func Load(lookup Lookup, runSh string) (*Boundary, error) {
	run, err := requiredPath(ArgRunSh, runSh, false, lookup)
	if err != nil {
		return nil, err
	}
	return load(lookup, parentOf(parentOf(run)))
}

// load validates everything but run.sh; engine is "" for a run without
// an engine (see ForRun).
func load(lookup Lookup, engine string) (*Boundary, error) {
	var err error
	b := &Boundary{engineSource: engine}
	raw, _ := lookup(EnvProtectedRoot)
	if b.protectedRoot, err = requiredPath(EnvProtectedRoot, raw, true, lookup); err != nil {
		return nil, err
	}
	lists := []struct {
		name string
		dirs bool
		dst  *[]string
	}{
		{EnvWorkspaceRoots, true, &b.workspaceRoots},
		{EnvRuntimeReadPaths, false, &b.runtimeReadPaths},
		{EnvRuntimeWritePaths, true, &b.runtimeWritePaths},
		{EnvChildPath, true, &b.childPath},
	}
	for _, l := range lists {
		if *l.dst, err = requiredPathList(l.name, l.dirs, lookup); err != nil {
			return nil, err
		}
	}
	if err := b.checkChildPathHasSystem(); err != nil {
		return nil, err
	}
	if err := b.checkContainment(); err != nil {
		return nil, err
	}
	if b.systemReadPaths, err = existingResolved(systemReadPaths, exists); err != nil {
		return nil, err
	}
	if err := b.checkChildPathReadable(); err != nil {
		return nil, err
	}
	if b.ports, err = reservedPorts(lookup); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *Boundary) checkChildPathHasSystem() error {
	required, err := existingResolved(systemChildPaths, isDir)
	if err != nil {
		return err
	}
	var missing []string
	for _, p := range required {
		if !slices.Contains(b.childPath, p) && !slices.Contains(missing, p) {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return invalid(EnvChildPath, "must include the system command directories; missing %s",
			strings.Join(missing, ":"))
	}
	return nil
}

func (b *Boundary) checkContainment() error {
	for _, root := range b.workspaceRoots {
		if root == b.protectedRoot || !Within(root, b.protectedRoot) {
			return invalid(EnvWorkspaceRoots, "%s is not strictly inside %s (%s)",
				root, EnvProtectedRoot, b.protectedRoot)
		}
	}
	runtime := []struct {
		name  string
		paths []string
	}{{EnvRuntimeReadPaths, b.runtimeReadPaths}, {EnvRuntimeWritePaths, b.runtimeWritePaths}}
	for _, r := range runtime {
		for _, p := range r.paths {
			if Within(p, b.protectedRoot) || Within(b.protectedRoot, p) {
				return invalid(r.name, "%s overlaps %s (%s); runtime paths must be outside it and must not contain it",
					p, EnvProtectedRoot, b.protectedRoot)
			}
		}
	}
	return nil
}

func (b *Boundary) checkChildPathReadable() error {
	roots := append(slices.Clone(b.systemReadPaths), b.runtimeReadPaths...)
	for _, p := range b.childPath {
		if !slices.ContainsFunc(roots, func(root string) bool { return Within(p, root) }) {
			return invalid(EnvChildPath, "%s is not under an allowed read path (a system directory or an entry of %s)",
				p, EnvRuntimeReadPaths)
		}
	}
	return nil
}

// existingResolved resolves the fixed system paths that pass present,
// keeping their order.
func existingResolved(paths []string, present func(string) bool) ([]string, error) {
	var out []string
	for _, p := range paths {
		if !present(p) {
			continue
		}
		r, err := realpath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// requiredPath validates one configured path and returns it resolved.
func requiredPath(name, raw string, directory bool, lookup Lookup) (string, error) {
	value := pycompat.Strip(raw)
	if value == "" || strings.ContainsAny(value, "\n\r\t") {
		return "", invalid(name, "%q is not a usable path (it is empty or contains a newline, carriage return or tab)", raw)
	}
	expanded, err := expandUser(value, lookup)
	if err != nil {
		return "", invalid(name, "%q: cannot determine the home directory for %q", value, strings.SplitN(value, "/", 2)[0])
	}
	if !strings.HasPrefix(expanded, "/") {
		return "", invalid(name, "%q is not an absolute path", value)
	}
	resolved, err := realpath(expanded)
	if err != nil {
		return "", invalid(name, "%q %s", value, resolveFailure(err))
	}
	if resolved == "/" {
		return "", invalid(name, "%q is the filesystem root, which cannot be a boundary", value)
	}
	if directory && !isDir(resolved) {
		return "", invalid(name, "%q is not a directory", value)
	}
	return resolved, nil
}

func resolveFailure(err error) string {
	var pe *fs.PathError
	switch {
	case errors.Is(err, errSymlinkLoop):
		return "contains a symlink loop"
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist"
	case errors.As(err, &pe):
		return "cannot be resolved: " + pe.Err.Error()
	}
	return "cannot be resolved"
}

// WritePaths is LOKI_HOST_RUNTIME_WRITE_PATHS alone, validated and
// resolved as Load does: what a caller that is not making a profile (the
// record's placement) needs to know of the writable roots.
func WritePaths(lookup Lookup) ([]string, error) {
	return requiredPathList(EnvRuntimeWritePaths, true, lookup)
}

// requiredPathList validates a colon-separated list. Entries are resolved
// before de-duplication, so "/bin:/usr/bin" is one entry where /bin is a
// link to /usr/bin; the first occurrence keeps its place.
func requiredPathList(name string, directories bool, lookup Lookup) ([]string, error) {
	values, err := listEntries(name, lookup, ":", "colon", "absolute paths")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, v := range values {
		p, err := requiredPath(name, v, directories, lookup)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// listEntries splits the setting name at sep, refusing it unset or blank
// (a sepName-separated list of what is wanted) and refusing an empty entry.
func listEntries(name string, lookup Lookup, sep, sepName, of string) ([]string, error) {
	raw, _ := lookup(name)
	if pycompat.Strip(raw) == "" {
		return nil, invalid(name, "is not set; it must be a %s-separated list of %s", sepName, of)
	}
	values := strings.Split(raw, sep)
	if slices.ContainsFunc(values, func(v string) bool { return pycompat.Strip(v) == "" }) {
		return nil, invalid(name, "has an empty entry (look for a doubled, leading or trailing '%s')", sep)
	}
	return values, nil
}

// reservedPorts parses LOKI_HOST_RESERVED_PORTS: comma-separated decimal
// ports 1..65535 (leading zeros allowed, as int() allows them), no repeats.
func reservedPorts(lookup Lookup) ([]int, error) {
	values, err := listEntries(EnvReservedPorts, lookup, ",", "comma", "TCP ports")
	if err != nil {
		return nil, err
	}
	var ports []int
	for _, v := range values {
		port, ok := parsePort(pycompat.Strip(v))
		if !ok {
			return nil, invalid(EnvReservedPorts, "%q is not a port (ports are whole numbers from 1 to 65535)", pycompat.Strip(v))
		}
		ports = append(ports, port)
	}
	// Repeats are looked for only once every entry parsed, so a bad entry
	// is reported first, as in the reference.
	for i, p := range ports {
		if slices.Contains(ports[:i], p) {
			return nil, invalid(EnvReservedPorts, "port %d is listed more than once", p)
		}
	}
	return ports, nil
}

func parsePort(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return 0, false
		}
	}
	return n, n >= 1
}
