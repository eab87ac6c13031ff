package docker

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ErrUser: the image's USER cannot be resolved to numeric ids.
var ErrUser = errors.New("image USER cannot be resolved")

// Account is an image user resolved to numbers, with its home.
type Account struct {
	UID, GID uint32
	Home     string
}

// IsRoot reports whether an image's USER value means root (docker's
// default when it is empty).
func IsRoot(user string) bool {
	u, g, _ := strings.Cut(user, ":")
	return (u == "" || u == "0" || u == "root") && (g == "" || g == "0" || g == "root")
}

// ResolveUser turns the image's USER (name or number, with an optional
// group) into numeric ids, the way docker does: names and a missing group
// come from the image's own /etc/passwd and /etc/group (read through a
// created, never started, container), a numeric uid without an entry has
// group 0. The session needs the numbers: loki-init runs as this user and
// must be able to read the lease, which the supervisor makes readable to
// that group alone.
func ResolveUser(docker, image, user string) (Account, error) {
	name, group, hasGroup := strings.Cut(user, ":")
	uid, uidErr := strconv.ParseUint(name, 10, 32)
	gid, gidErr := strconv.ParseUint(group, 10, 32)
	if uidErr == nil && hasGroup && gidErr == nil {
		return Account{UID: uint32(uid), GID: uint32(gid), Home: "/"}, nil
	}
	passwd, groups, err := imageFiles(docker, image)
	if err != nil {
		return Account{}, fmt.Errorf("%w: %s: %v", ErrUser, user, err)
	}
	acct, found := Account{Home: "/"}, false
	for _, f := range passwd {
		// name:x:uid:gid:gecos:home:shell
		if len(f) < 7 {
			continue
		}
		if f[0] == name || uidErr == nil && f[2] == name {
			u, e1 := strconv.ParseUint(f[2], 10, 32)
			g, e2 := strconv.ParseUint(f[3], 10, 32)
			if e1 == nil && e2 == nil {
				acct, found = Account{UID: uint32(u), GID: uint32(g), Home: f[5]}, true
				break
			}
		}
	}
	switch {
	case found:
	case uidErr == nil:
		acct.UID = uint32(uid) // a numeric uid without an entry: group 0
	default:
		return Account{}, fmt.Errorf("%w: %q has no entry in the image's /etc/passwd", ErrUser, name)
	}
	if hasGroup {
		if gidErr == nil {
			acct.GID = uint32(gid)
		} else if g, ok := lookupGroup(groups, group); ok {
			acct.GID = g
		} else {
			return Account{}, fmt.Errorf("%w: group %q has no entry in the image's /etc/group", ErrUser, group)
		}
	}
	return acct, nil
}

func lookupGroup(groups [][]string, name string) (uint32, bool) {
	for _, f := range groups {
		if len(f) >= 3 && f[0] == name {
			if g, err := strconv.ParseUint(f[2], 10, 32); err == nil {
				return uint32(g), true
			}
		}
	}
	return 0, false
}

// imageFiles reads /etc/passwd and /etc/group of image (each may be
// missing) from a container that is created and removed, never started.
func imageFiles(docker, image string) (passwd, group [][]string, err error) {
	out, err := cli(docker, "create", "--entrypoint", "/nonexistent", image)
	if err != nil {
		return nil, nil, err
	}
	id := strings.TrimSpace(string(out))
	defer cli(docker, "rm", "-f", id)
	read := func(path string) [][]string {
		data, err := cli(docker, "cp", id+":"+path, "-")
		if err != nil {
			return nil
		}
		return colonFile(untarFirst(data))
	}
	return read("/etc/passwd"), read("/etc/group"), nil
}

func untarFirst(data []byte) []byte {
	tr := tar.NewReader(bytes.NewReader(data))
	if _, err := tr.Next(); err != nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(tr, 4<<20))
	return b
}

func colonFile(b []byte) [][]string {
	var out [][]string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, strings.Split(line, ":"))
		}
	}
	return out
}
