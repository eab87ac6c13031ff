package mounts

import (
	"path/filepath"
	"slices"
)

// HostViews is what a container would see of the host's socket dirs and
// sockets through its views (the rootfs at "/", then the binds), and so
// must be covered: the rule of the namespace backend, where they are
// the host's own paths.
type HostViews struct {
	// Private are container paths showing one of the host's private
	// dirs (confine.PrivateHostDirs): each gets an empty tmpfs of its own
	// (a socket re-created there after the start is not seen).
	Private []string
	// Masked are container paths showing a host socket found at the
	// start (mask): each is covered by /dev/null.
	Masked []string
}

// SocketViews lists them for the rootfs ("" for an image, which is not
// the host's) and the binds, given the host's private dirs and its
// sockets found at the start (sockdiag): a socket in a private dir goes
// with it; one under a writable bind (where the peer could bind its own)
// or under keep (--socket, --write) stays. hiddenInRootfs are container
// paths the rootfs does not show (the container's own tmpfs mounts).
func SocketViews(rootfs string, binds []Bind, private, sockets, keep, hiddenInRootfs []string) HostViews {
	var hv HostViews
	views := append([]Bind{{Source: rootfs, Destination: "/", ReadOnly: true}}, binds...)
	if rootfs == "" {
		views[0] = Bind{Source: "/nonexistent-rootfs", Destination: "/"}
	}
	seen := func(d string, in []string) bool { return slices.Contains(in, d) }
	for _, dir := range private {
		for _, dest := range showing(dir, views, hiddenInRootfs) {
			if !seen(dest, hv.Private) {
				hv.Private = append(hv.Private, dest)
			}
		}
	}
	for _, s := range sockets {
		if UnderAny(s, private) || UnderAny(s, keep) {
			continue
		}
		for i, v := range views {
			if rel, ok := Within(s, realPath(v.Source)); ok && v.ReadOnly {
				dest := filepath.Join(v.Destination, rel)
				if i == 0 && UnderAny(dest, hiddenInRootfs) || seen(dest, hv.Masked) {
					continue
				}
				hv.Masked = append(hv.Masked, dest)
			}
		}
	}
	return hv
}

// showing lists the container paths where the views show the host path.
func showing(host string, views []Bind, hiddenInRootfs []string) []string {
	var out []string
	for i, v := range views {
		rel, ok := Within(host, realPath(v.Source))
		if !ok {
			continue
		}
		dest := filepath.Join(v.Destination, rel)
		if i == 0 && UnderAny(dest, hiddenInRootfs) {
			continue
		}
		out = append(out, dest)
	}
	return out
}
