//go:build linux

package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/landlock"
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/cgroup"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/isolation/docker"
	"github.com/loki-sh/loki/internal/session/isolation/namespace"
	"github.com/loki-sh/loki/internal/session/isolation/none"
	"github.com/loki-sh/loki/internal/session/isolation/oci"
)

// Run checks this host, as this process's user. self is an executable
// that exits 0 when run with selfArgs (the namespace probes run it).
func Run(self string, selfArgs []string) Report {
	uid := os.Geteuid()
	r := Report{UID: uid, DefaultSession: true}
	root := uid == 0
	userns := sysctlUserns()
	// What the default (namespace) backend clones: pid + mount, and a
	// user namespace when not root.
	flags := uintptr(unix.CLONE_NEWPID | unix.CLONE_NEWNS)
	nsName := "pid+mount namespaces"
	if !root {
		flags |= unix.CLONE_NEWUSER
		nsName = "pid+mount+user namespaces"
	}
	err := probeClone(self, selfArgs, flags)
	r.add(Check{Name: nsName, OK: err == nil, Needed: true, Detail: detail(err, "the default namespace backend can make its namespaces"),
		Fix: "run as root, or allow unprivileged user namespaces (" + userns.fix + "); else use --isolation oci or none"})
	if root {
		// The default session as root: a private user namespace, with
		// the cwd shown through an idmapped mount.
		cwd, _ := os.Getwd()
		err = probeIDMap(self, selfArgs, cwd)
		r.add(Check{Name: "private user namespace", OK: err == nil, Needed: true,
			Detail: detail(err, "idmapped mounts work on "+cwd+"'s filesystem: the agent's root is an unprivileged host uid"),
			Fix:    "Linux 5.12+ and a filesystem with idmapped mounts (ext4, xfs, btrfs, tmpfs 6.3+); else session --userns host"})
	}
	err = probeClone(self, selfArgs, unix.CLONE_NEWUSER)
	r.add(Check{Name: "user namespaces", OK: err == nil, Detail: detail(err, "this user can make one") + userns.detail,
		Fix: userns.fix})
	err = probeClone(self, selfArgs, flags|unix.CLONE_NEWNET)
	r.add(Check{Name: "network namespaces", OK: err == nil, Detail: detail(err, "--network none|loopback can be given"),
		Fix: "a kernel with CONFIG_NET_NS; as non-root, user namespaces (above)"})
	cgroups(&r)
	r.LandlockABI = landlock.ABI()
	r.add(Check{Name: "landlock", OK: r.LandlockABI > 0, Detail: landlockDetail(r.LandlockABI),
		Fix: "boot with lsm=...,landlock (CONFIG_SECURITY_LANDLOCK); LOKI_HOST_LANDLOCK builds need ABI 6"})
	for _, rt := range []string{"crun", "runc"} {
		p, err := exec.LookPath(rt)
		d := detail(err, p+" (--isolation oci --runtime "+rt+")")
		if err == nil && root {
			d += "; " + ociUserNS(p, rt)
		}
		r.add(Check{Name: rt, OK: err == nil, Detail: d,
			Fix: "install " + rt + " (apt-get install " + rt + ") for --isolation oci"})
	}
	r.add(dockerCheck())
	r.Isolation = isolation()
	return r
}

// isolation reads every backend's declared capabilities.
func isolation() []Isolation {
	var out []Isolation
	for _, b := range []session.Backend{&namespace.Backend{}, &oci.Backend{}, &docker.Backend{}, none.Backend{}} {
		caps := b.Capabilities()
		is := Isolation{Name: b.Name(), Refuses: []Refusal{}, Syscalls: caps.Syscalls, Reports: []string{}}
		for _, k := range caps.Observes {
			is.Reports = append(is.Reports, string(k))
		}
		for _, k := range confine.Knobs {
			if s, ok := caps.Knobs[k]; !ok || !s.Given {
				is.Refuses = append(is.Refuses, Refusal{Knob: string(k), Fix: s.Fix})
			}
		}
		out = append(out, is)
	}
	return out
}

// ociUserNS says what a root session's private user namespace gets from
// the runtime: writable binds need one that idmaps a mount.
func ociUserNS(path, flavour string) string {
	version, ok := oci.IDMapSupport(path, flavour)
	if ok {
		return version + ": private user namespace, writable binds idmapped"
	}
	return version + ": private user namespace with read-only binds only (idmapped mounts need crun 1.4.3+ or runc 1.2+); --write or a rw --bind needs --userns host"
}

func detail(err error, ok string) string {
	if err != nil {
		return err.Error()
	}
	return ok
}

// probeClone runs self in new namespaces (flags), mapping this user to
// itself in a new user namespace.
func probeClone(self string, args []string, flags uintptr) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags, Pdeathsig: syscall.SIGKILL}
	if flags&unix.CLONE_NEWUSER != 0 {
		uid, gid := os.Geteuid(), os.Getegid()
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
	}
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("probe exited %v", ee.ProcessState)
		}
		return fmt.Errorf("refused: %v", errors.Unwrap(err))
	}
	return nil
}

// probeIDMap makes what a root session's stage gets: a user namespace
// mapping the private block (self waits in it, reading stdin), and an
// idmapped clone of dir by it, never attached.
func probeIDMap(self string, args []string, dir string) error {
	rng := confine.PrivateRange()
	cmd := exec.Command(self, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWUSER, Pdeathsig: syscall.SIGKILL,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: int(rng.UID), Size: int(rng.Size)}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: int(rng.GID), Size: int(rng.Size)}}}
	w, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("user namespace refused: %v", errors.Unwrap(err))
	}
	defer cmd.Wait()
	defer w.Close()
	ns, err := unix.Open("/proc/"+strconv.Itoa(cmd.Process.Pid)+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(ns)
	fd, err := unix.OpenTree(unix.AT_FDCWD, dir, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("open_tree %s: %v", dir, err)
	}
	defer unix.Close(fd)
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(ns)}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		return fmt.Errorf("idmapped mount of %s: %v", dir, err)
	}
	return nil
}

type usernsFacts struct{ detail, fix string }

// sysctlUserns reads the switches that restrict user namespaces.
func sysctlUserns() usernsFacts {
	var f usernsFacts
	var parts []string
	read := func(p string) (int, bool) {
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, false
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		return n, err == nil
	}
	var fixes []string
	if n, ok := read("/proc/sys/user/max_user_namespaces"); ok {
		parts = append(parts, "user.max_user_namespaces="+strconv.Itoa(n))
		if n == 0 {
			fixes = append(fixes, "sysctl -w user.max_user_namespaces=15000")
		}
	}
	if n, ok := read("/proc/sys/kernel/unprivileged_userns_clone"); ok {
		parts = append(parts, "kernel.unprivileged_userns_clone="+strconv.Itoa(n))
		if n == 0 {
			fixes = append(fixes, "sysctl -w kernel.unprivileged_userns_clone=1")
		}
	}
	if n, ok := read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); ok {
		parts = append(parts, "kernel.apparmor_restrict_unprivileged_userns="+strconv.Itoa(n))
		if n != 0 {
			fixes = append(fixes, "an AppArmor profile allowing userns for loki-supervise, or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0")
		}
	}
	if len(parts) > 0 {
		f.detail = " (" + strings.Join(parts, ", ") + ")"
	}
	f.fix = strings.Join(fixes, "; ")
	if f.fix == "" {
		f.fix = "a kernel with CONFIG_USER_NS"
	}
	return f
}

// cgroups reports the version and, per controller, whether this user can
// make a session cgroup with it (made and removed for real).
func cgroups(r *Report) {
	host, err := cgroup.Detect()
	r.CgroupVersion = host.Version()
	if err != nil {
		r.CgroupVersion = "none"
	}
	where := "v2"
	if host.UsesV1() {
		where = "v1"
	}
	for _, c := range []struct {
		ctrl, what string
		res        confine.Resources
	}{
		{"pids", "--pids-max and the default pids limit", confine.Resources{}},
		{"memory", "--memory-max", confine.Resources{PidsMax: confine.Unlimited, MemoryMax: 1 << 30}},
		{"cpu", "--cpu-max", confine.Resources{PidsMax: confine.Unlimited, CPU: &confine.CPUMax{Quota: 100000, Period: 100000}}},
	} {
		err := err
		if err == nil {
			var cg *cgroup.Cgroup
			cg, err = host.Create("loki-doctor-"+strconv.Itoa(os.Getpid()), c.res)
			if err == nil {
				err = cg.Remove()
			}
		}
		fix := "run as root or in a delegated cgroup (systemd-run --user --scope -p Delegate=yes ...)"
		if os.Geteuid() == 0 {
			fix = "mount the " + c.ctrl + " controller (cgroup v1) or enable it in the parent's cgroup.subtree_control (v2)"
		}
		r.add(Check{Name: "cgroup " + c.ctrl, OK: err == nil,
			Detail: detail(err, "cgroup "+where+" ("+r.CgroupVersion+" host): "+c.what+" can be applied"), Fix: fix})
	}
}

func landlockDetail(abi int) string {
	if abi == 0 {
		return "not enabled in this kernel"
	}
	return "ABI " + strconv.Itoa(abi)
}

// dockerCheck: the CLI and a daemon answering it.
func dockerCheck() Check {
	c := Check{Name: "docker", Fix: "install Docker and start dockerd for --isolation docker"}
	p, err := exec.LookPath("docker")
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "version", "--format", "{{.Server.Version}}").Output()
	if err != nil {
		c.Detail = p + ": no daemon answers"
		c.Fix = "start dockerd (or set DOCKER_HOST) for --isolation docker"
		return c
	}
	c.OK, c.Detail = true, p+", engine "+strings.TrimSpace(string(out))
	return c
}
