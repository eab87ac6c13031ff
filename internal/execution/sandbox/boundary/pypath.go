package boundary

import (
	"errors"
	"io/fs"
	"os"
	"os/user"
	"strings"
)

// This file reproduces the few pathlib behaviours the boundary rules rest
// on. They are written out rather than approximated with filepath helpers
// because the differences (".." after a file, "~user") change which
// configurations are accepted. Whitespace is Python's (pycompat.Strip).

// errSymlinkLoop is what a strict resolve reports for a cycle of links.
var errSymlinkLoop = errors.New("symlink loop")

// expandUser is pathlib's Path.expanduser: a leading "~" or "~name"
// component becomes that user's home directory; anything else is returned
// unchanged. HOME wins for the current user when it is set, even if empty.
func expandUser(p string, lookup Lookup) (string, error) {
	if !strings.HasPrefix(p, "~") {
		return p, nil
	}
	first, rest, _ := strings.Cut(p, "/")
	home, err := homeOf(first[1:], lookup)
	if err != nil {
		return "", err
	}
	home = strings.TrimRight(home, "/")
	if rest == "" {
		if home == "" {
			return "/", nil
		}
		return home, nil
	}
	return home + "/" + rest, nil
}

func homeOf(name string, lookup Lookup) (string, error) {
	if name == "" {
		if h, ok := lookup("HOME"); ok {
			return h, nil
		}
		u, err := user.Current()
		if err != nil {
			return "", err
		}
		return u.HomeDir, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return "", err
	}
	return u.HomeDir, nil
}

// realpath is posixpath.realpath(name, strict=True) for an absolute name:
// components are resolved left to right against the filesystem, ".." backs
// up the part already resolved (so "file/.." is its directory, as in
// Python), and any missing component or a cycle of links is an error.
func realpath(name string) (string, error) {
	return joinReal("", name, map[string]*string{})
}

// joinReal resolves rest relative to the resolved prefix p. seen maps each
// link being or already resolved to its result (nil while in progress).
func joinReal(p, rest string, seen map[string]*string) (string, error) {
	if strings.HasPrefix(rest, "/") {
		rest, p = rest[1:], "/"
	}
	for rest != "" {
		var name string
		name, rest, _ = strings.Cut(rest, "/")
		switch name {
		case "", ".":
			continue
		case "..":
			p = parentOf(p)
			continue
		}
		next := joinPath(p, name)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			p = next
			continue
		}
		if done, ok := seen[next]; ok {
			if done == nil {
				return "", &fs.PathError{Op: "resolve", Path: next, Err: errSymlinkLoop}
			}
			p = *done
			continue
		}
		seen[next] = nil
		link, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if p, err = joinReal(p, link, seen); err != nil {
			return "", err
		}
		resolved := p
		seen[next] = &resolved
	}
	return p, nil
}

// parentOf drops the last component of a resolved absolute path; the
// parent of "/" is "/".
func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

func joinPath(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// Within reports whether path equals root or lies below it, comparing whole
// components (pathlib's relative_to): "/ab" is not within "/a". Both must
// be clean absolute paths. mounts.Under answers the same for the session's
// mount plans; a leaf both could import would be a 15th internal/ dir.
func Within(path, root string) bool {
	if root == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == root || strings.HasPrefix(path, root+"/")
}

// Parents lists the proper ancestors of a clean absolute path, nearest
// first, ending with "/" (pathlib's Path.parents).
func Parents(p string) []string {
	var out []string
	for p != "/" {
		p = parentOf(p)
		out = append(out, p)
	}
	return out
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
