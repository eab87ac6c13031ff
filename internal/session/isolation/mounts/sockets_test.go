package mounts

import (
	"slices"
	"testing"

	"github.com/loki-sh/loki/internal/session/confine"
)

// TestSocketViews: a bind showing a private dir gets a tmpfs at its
// place; a host socket found at the start is masked where the rootfs or
// a read-only bind shows it, never under a private dir, a writable bind
// or --socket.
func TestSocketViews(t *testing.T) {
	if !slices.Contains(confine.PrivateHostDirs(), "/run") {
		t.Skip("no /run on this host")
	}
	binds := []Bind{
		{Source: "/", Destination: "/host", ReadOnly: true},
		{Source: "/run", Destination: "/hostrun", ReadOnly: true},
		{Source: "/var/tmp", Destination: "/scratch"}, // writable
	}
	socks := []string{"/run/docker.sock", "/var/lib/d/d.sock", "/var/tmp/x.sock", "/srv/opted.sock"}
	hv := SocketViews("/srv/rootfs", binds, confine.PrivateHostDirs(), socks, []string{"/srv/opted.sock"}, []string{"/tmp", "/dev"})
	for _, want := range []string{"/host/tmp", "/host/run", "/hostrun"} {
		if !slices.Contains(hv.Private, want) {
			t.Errorf("Private = %v, want %s in it", hv.Private, want)
		}
	}
	if want := []string{"/host/var/lib/d/d.sock", "/host/var/tmp/x.sock"}; !slices.Equal(hv.Masked, want) {
		t.Errorf("Masked = %v, want %v", hv.Masked, want)
	}
}
