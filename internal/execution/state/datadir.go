package state

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// EnvDataDir names the directory holding dashboard/builds.
const EnvDataDir = "LOKI_DATA_DIR"

// DefaultStore is the store under $LOKI_DATA_DIR (default ~/.loki),
// found exactly as the reference finds it, because a dashboard computes
// the same path to read the records: unset means ~/.loki; set but empty
// means the current directory (pathlib's Path("")); a leading "~" or
// "~name" is that user's home; the result is made absolute with symlinks
// resolved in the part that exists.
func DefaultStore() (*Store, error) {
	base, ok := os.LookupEnv(EnvDataDir)
	if !ok {
		base = "~/.loki"
	}
	if base == "" {
		base = "."
	}
	base, err := expandUser(base)
	if err != nil {
		return nil, err
	}
	base, err = resolve(base)
	if err != nil {
		return nil, err
	}
	return NewStore(filepath.Join(base, "dashboard", "builds")), nil
}

// expandUser is pathlib's Path.expanduser: a first component "~" is $HOME
// (when set, even empty; else the password database), "~name" is name's
// home; a user that cannot be found is an error, as in the reference.
func expandUser(p string) (string, error) {
	if !strings.HasPrefix(p, "~") {
		return p, nil
	}
	first, rest, _ := strings.Cut(p, "/")
	var home string
	if name := first[1:]; name == "" {
		h, ok := os.LookupEnv("HOME")
		if !ok {
			u, err := user.Current()
			if err != nil {
				return "", fmt.Errorf("state: cannot expand %s in %s: %w", first, EnvDataDir, err)
			}
			h = u.HomeDir
		}
		home = h
	} else {
		u, err := user.Lookup(name)
		if err != nil {
			return "", fmt.Errorf("state: cannot expand %s in %s: no such user", first, EnvDataDir)
		}
		home = u.HomeDir
	}
	home = strings.TrimRight(home, "/")
	if home == "" {
		home = "/"
	}
	return filepath.Join(home, rest), nil
}
