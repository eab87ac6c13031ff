package boundary

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/loki-sh/loki/internal/canonjson"
)

// Identity names one boundary configuration. ConfigSHA256 is the SHA-256 of
// the canonical JSON of the configuration (not of the workspace root), so
// every workspace under the same configuration shares it; the other fields
// repeat the configuration in the joined form of the environment.
type Identity struct {
	WorkspaceRoot     string
	ProtectedRoot     string
	RuntimeReadPaths  string
	RuntimeWritePaths string
	ChildPath         string
	ReservedPorts     string
	ConfigSHA256      string
}

// Map returns the identity under the reference's field names. A map (not
// struct tags) keeps path bytes that are not UTF-8 intact through canonjson.
func (id Identity) Map() map[string]string {
	return map[string]string{
		"workspace_root":      id.WorkspaceRoot,
		"protected_root":      id.ProtectedRoot,
		"runtime_read_paths":  id.RuntimeReadPaths,
		"runtime_write_paths": id.RuntimeWritePaths,
		"child_path":          id.ChildPath,
		"reserved_ports":      id.ReservedPorts,
		"config_sha256":       id.ConfigSHA256,
	}
}

// IdentityOf validates the boundary and returns its identity for
// workspaceRoot, which must equal (after resolution) one of the roots.
func IdentityOf(lookup Lookup, workspaceRoot, runSh string) (Identity, error) {
	b, err := Load(lookup, runSh)
	if err != nil {
		return Identity{}, err
	}
	root, err := requiredPath(ArgWorkspaceRoot, workspaceRoot, true, lookup)
	if err != nil {
		return Identity{}, err
	}
	if !slices.Contains(b.workspaceRoots, root) {
		return Identity{}, invalid(ArgWorkspaceRoot, "%s is not an entry of %s (it must match one exactly, after resolving links)",
			root, EnvWorkspaceRoots)
	}
	sum, err := b.configSHA256()
	if err != nil {
		return Identity{}, err
	}
	ports := make([]string, len(b.ports))
	for i, p := range b.ports {
		ports[i] = strconv.Itoa(p)
	}
	return Identity{
		WorkspaceRoot:     root,
		ProtectedRoot:     b.protectedRoot,
		RuntimeReadPaths:  strings.Join(b.runtimeReadPaths, ":"),
		RuntimeWritePaths: strings.Join(b.runtimeWritePaths, ":"),
		ChildPath:         strings.Join(b.childPath, ":"),
		ReservedPorts:     strings.Join(ports, ","),
		ConfigSHA256:      sum,
	}, nil
}

// configSHA256 hashes the compact, key-sorted, ASCII-escaped JSON of the
// configuration: the exact bytes the reference hashes.
func (b *Boundary) configSHA256() (string, error) {
	payload := map[string]any{
		"workspace_roots":     b.workspaceRoots,
		"protected_root":      b.protectedRoot,
		"runtime_read_paths":  b.runtimeReadPaths,
		"runtime_write_paths": b.runtimeWritePaths,
		"child_path":          b.childPath,
		"reserved_ports":      b.ports,
	}
	encoded, err := canonjson.Marshal(payload)
	if err != nil {
		return "", fmt.Errorf("boundary: encode identity: %w", err)
	}
	sum := sha256.Sum256(encoded)
	return hex.EncodeToString(sum[:]), nil
}
