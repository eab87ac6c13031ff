package docker

import (
	"os"
	"slices"
	"strconv"

	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/session/confine"
)

// withPolicy translates the session's policy into docker run's flags
// (Admit has refused what docker cannot give).
func (o Options) withPolicy(p confine.Policy) Options {
	r := p.Resources
	o.PidsLimit, o.MemoryMax = r.Pids(), r.MemoryMax
	if r.CPU != nil {
		o.CPUs = strconv.FormatFloat(r.CPU.CPUs(), 'f', -1, 64)
	}
	// --write PATH: the host path, writable, at the same path (the oci
	// backend's rule); --hide PATH covers the container's PATH.
	o.Binds = slices.Clip(o.Binds)
	for _, w := range p.Write {
		o.Binds = append(o.Binds, w+":"+w)
	}
	// Protected paths inside those stay read-only: binds of themselves,
	// deeper than the writable ones, so docker mounts them after.
	for _, pr := range p.Protect {
		o.Binds = append(o.Binds, pr+":"+pr+":ro")
	}
	o.Hide = p.Hide
	if u := p.User; u != nil {
		o.User = u.String()
	}
	// host keeps docker's own default network (a bridge that reaches
	// what the host does); docker's none has lo up, like crun's.
	if p.Net().Private() {
		o.Network = "none"
	}
	return o
}

// Prepare makes the peer run as the image's command would: the image's
// ENV, then what the session names (Env; TERM, LANG, LC_*, TZ), and its
// WORKDIR unless the session gave a cwd. loki-init runs as the image's
// USER, which must be able to read the lease: unless the policy names a
// user, a USER other than root is resolved to numbers and becomes the
// policy's, as --user would (the lease is made readable to that group).
func (b *Backend) Prepare(peer *launch.Spec, p *confine.Policy) error {
	img, err := Inspect(b.Options.Docker, b.Options.Image)
	if err != nil {
		return err
	}
	if p.User == nil && !IsRoot(img.User) {
		acct, err := ResolveUser(b.Options.Docker, b.Options.Image, img.User)
		if err != nil {
			return err
		}
		p.User = &confine.User{UID: acct.UID, GID: acct.GID}
		img.Home = acct.Home
	}
	peer.Env = img.PeerEnv(b.Env, os.Environ())
	if peer.Cwd == "" {
		peer.Cwd = img.Cwd()
	}
	return nil
}
