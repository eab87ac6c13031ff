package oci

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/loki-sh/loki/internal/session/confine"
)

// A root supervisor's container gets a user namespace of its own, as the
// namespace backend's peer does: its uid and gid 0 are the unprivileged
// host ids of confine.PrivateRange, so the host's files are not its own
// and only their "other" bits apply to it. A writable bind is an idmapped
// mount (on-disk ids read as the same ids inside), so the peer writes it
// as before and its files land with the owners they had without the
// namespace; read-only binds, loki-init and the rootfs are shown as they
// are. A runtime that cannot idmap a mount is refused a writable bind,
// never handed one the peer cannot write.

// UserNamespace decides whether a session of p, run by euid, gets a
// private user namespace, and which host ids it maps: as root, unless
// --user or --userns host keep the host's ids. Without root the runtime
// cannot map a block of ids (Capabilities refuses --userns private).
func UserNamespace(p confine.Policy, euid int) *confine.IDRange {
	if euid != 0 || !p.PrivateUserNS() {
		return nil
	}
	r := confine.PrivateRange()
	return &r
}

func idMappings(r confine.IDRange) (uid, gid []specs.LinuxIDMapping) {
	return []specs.LinuxIDMapping{{ContainerID: 0, HostID: r.UID, Size: r.Size}},
		[]specs.LinuxIDMapping{{ContainerID: 0, HostID: r.GID, Size: r.Size}}
}

// writableBind is the mount of a writable host path. In a user namespace
// it is idmapped by the container's own mappings: the "idmap" option
// (crun 1.4.3+, runc 1.2+) with the mappings on the mount as well, which
// runc 1.2 reads. An idmapped bind covers the path's own mount only (no
// runtime here clones the mounts below it), and the recursive nosuid and
// nodev are what crun applies to it.
func (o Options) writableBind(src, dst string) specs.Mount {
	if o.UserNS == nil {
		return specs.Mount{Destination: dst, Type: "bind", Source: src, Options: []string{"rbind", "nosuid", "nodev"}}
	}
	uid, gid := idMappings(*o.UserNS)
	return specs.Mount{Destination: dst, Type: "bind", Source: src,
		Options:     []string{"bind", "nosuid", "nodev", "rnosuid", "rnodev", "idmap"},
		UIDMappings: uid, GIDMappings: gid}
}

// writableBinds lists the host paths a session of o binds writable.
func (o Options) writableBinds() []string {
	w := append([]string(nil), o.Confine.Write...)
	for _, b := range o.Binds {
		if !b.ReadOnly {
			w = append(w, b.Source)
		}
	}
	return w
}

// validateUserNS refuses what a private user namespace cannot run: a
// rootfs or loki-init the namespace's root could not reach (runc resolves
// the rootfs inside the namespace, where the host's 0700 dirs stop it),
// and a writable rootfs it could not write.
func (o Options) validateUserNS() error {
	r := *o.UserNS
	if d := unsearchable(o.Rootfs); d != "" {
		return confine.Refuse(Name, "a private user namespace with the rootfs "+o.Rootfs,
			d+" is not searchable by others (chmod o+x it), or use --userns host")
	}
	if st, err := os.Stat(o.Init); err != nil || st.Mode()&0o001 == 0 {
		return confine.Refuse(Name, "a private user namespace with loki-init "+o.Init,
			"it is not executable by others (chmod o+x it), or use --userns host")
	}
	if o.WritableRootfs {
		var st syscall.Stat_t
		if err := syscall.Stat(o.Rootfs, &st); err != nil || st.Uid != r.UID {
			return confine.Refuse(Name, "--writable-rootfs in a private user namespace",
				fmt.Sprintf("the rootfs is not owned by its root, host uid %d (chown -R %d:%d it), or use --userns host", r.UID, r.UID, r.GID))
		}
	}
	return nil
}

// unsearchable returns the first of path and its parents that others
// cannot search, "" when there is none.
func unsearchable(path string) string {
	for d := filepath.Clean(path); ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err != nil || st.Mode()&0o001 == 0 {
			return d
		}
		if d == "/" {
			return ""
		}
	}
}

// CheckIDMap refuses a session whose writable binds the runtime at path
// (flavour crun or runc) cannot idmap: runc before 1.2 and crun before
// 1.4.3 pass the "idmap" option over, so the peer would get a bind it
// cannot write.
func CheckIDMap(o Options, path, flavour string) error {
	w := o.writableBinds()
	if o.UserNS == nil || len(w) == 0 {
		return nil
	}
	version, ok := IDMapSupport(path, flavour)
	if ok {
		return nil
	}
	return confine.Refuse(Name, fmt.Sprintf("%s writable in a private user namespace with %s", w[0], version),
		"it cannot idmap a mount (crun 1.4.3+ or runc 1.2+ can): use --runtime crun, --userns host or --user UID")
}

// IDMapSupport reports the runtime's version ("runc 1.1.5") and whether
// it idmaps a mount with the "idmap" option.
func IDMapSupport(path, flavour string) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		return filepath.Base(path) + " (version unknown)", false
	}
	v := parseVersion(string(out))
	name := flavour + " " + strings.Join(intsToStrings(v), ".")
	if len(v) == 0 {
		return filepath.Base(path) + " (version unknown)", false
	}
	want := []int{1, 2}
	if flavour == "crun" {
		want = []int{1, 4, 3}
	}
	return name, atLeast(v, want)
}

// parseVersion reads "NAME version 1.8.1[+suffix]" from the first line.
func parseVersion(out string) []int {
	line, _, _ := strings.Cut(out, "\n")
	f := strings.Fields(line)
	if len(f) < 3 || f[1] != "version" {
		return nil
	}
	s := f[2]
	if i := strings.IndexFunc(s, func(r rune) bool { return r != '.' && (r < '0' || r > '9') }); i >= 0 {
		s = s[:i]
	}
	var v []int
	for _, p := range strings.Split(s, ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil
		}
		v = append(v, n)
	}
	return v
}

func atLeast(v, want []int) bool {
	for i, w := range want {
		n := 0
		if i < len(v) {
			n = v[i]
		}
		if n != w {
			return n > w
		}
	}
	return true
}

func intsToStrings(v []int) []string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return s
}
