package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/cmd/internal/sessionflags"
	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/isolation/mounts"
	"github.com/loki-sh/loki/internal/session/isolation/oci"
)

func ociSpecCommand() *cli.Command {
	return &cli.Command{
		Name:      "oci-spec",
		Usage:     "print the OCI runtime config.json the oci backend uses",
		UsageText: "loki-supervise oci-spec --rootfs DIR --control-dir DIR [flags] > bundle/config.json",
		Description: `Prints the config.json of an OCI bundle whose process is loki-init, for people who
run bundles with their own tooling (containerd, CRI-O, Kubernetes, plain runc).
loki-init is bind-mounted read-only from --init at /.loki/init and the control
dir (where your host side keeps replacing the 8-byte lease file) read-only at
/.loki/control. Every capability set is empty, noNewPrivileges is set, the root
filesystem is read-only (with a tmpfs /tmp), and a pids limit applies.

As root the container gets a user namespace of its own (as session does; --userns
host or --user keep the host's ids): its root is host uid 1879048192 (or root's
/etc/subuid block), writable binds are idmapped. Then the init reads the lease as
"others" or as the block's first gid: make the control dir 0750 and the lease
0640 with that group. The runtime cannot create mount points in a rootfs owned by
the host's root: the rootfs needs /.loki/init (a file), /.loki/control (a dir)
and each bind's destination (session makes them itself).

If your host keeps the control dirs of several sessions under one directory,
name it with --control-root: wherever the rootfs or a --bind would show it to
the peer (its siblings' leases), the config covers that view with an empty
read-only tmpfs, and a rootfs or bind inside it is refused. Without it only the
control dir itself is kept out of those views.

Example:
  loki-supervise oci-spec --rootfs /srv/rootfs --control-dir /run/me/s1/ctl --control-root /run/me > bundle/config.json`,
		Flags: append(sessionflags.Bundle(),
			&cli.StringFlag{Name: "runtime", Usage: "crun or runc (or a path): refuse what that runtime cannot give, as session does (runc before 1.2 cannot idmap a writable bind)"},
			&cli.StringFlag{Name: "control-dir", Usage: "host path of the control dir (required)"},
			&cli.StringFlag{Name: "control-root", Usage: "host dir holding every session's control dir, hidden from the peer (default: the control dir)"}),
		Action: func(c *cli.Context) error {
			ctl := c.String("control-dir")
			if ctl == "" {
				return usage("oci-spec: --control-dir DIR is required")
			}
			ctl, err := filepath.Abs(ctl)
			if err != nil {
				return usage("oci-spec: %v", err)
			}
			init, err := session.FindInit(c.String("init"))
			if err != nil {
				return notLaunched(err)
			}
			if err := sessionflags.PositiveDurations(c, sessionflags.Timing...); err != nil {
				return err
			}
			opts, err := bundleOptions(c, init)
			if err != nil {
				return err
			}
			policy, err := confinePolicy(c)
			if err != nil {
				return err
			}
			// Refused as session refuses it.
			if err := session.Admit(oci.Name, (&oci.Backend{}).Capabilities(), policy, false); errors.Is(err, confine.ErrPolicy) {
				return usage("oci-spec: %v", err)
			} else if err != nil {
				return notLaunched(err)
			}
			opts = opts.WithPolicy(policy)
			opts.ControlDir = ctl
			if root := c.String("control-root"); root != "" {
				if opts.ControlRoot, err = filepath.Abs(root); err != nil {
					return usage("oci-spec: %v", err)
				}
				if rel, ok := mounts.Within(ctl, opts.ControlRoot); !ok || rel == "." {
					return usage("oci-spec: --control-dir %s is not inside --control-root %s", ctl, opts.ControlRoot)
				}
			}
			eof, err := sessionflags.EOFRule(c)
			if err != nil {
				return err
			}
			opts.InitArgs = session.Config{
				LeaseDuration: c.Duration("lease-duration"),
				PollInterval:  c.Duration("poll-interval"),
				Grace:         c.Duration("grace"),
				EOF:           eof,
			}.InitArgs()
			spec, err := oci.Config(opts)
			if errors.Is(err, confine.ErrUnsupported) {
				return notLaunched(err)
			}
			if err != nil {
				return usage("oci-spec: %v", err)
			}
			if name := c.String("runtime"); name != "" {
				rt, flavour, err := oci.ResolveRuntime(name)
				if err != nil {
					return notLaunched(err)
				}
				if err := oci.CheckIDMap(opts, rt, flavour); err != nil {
					return notLaunched(err)
				}
			}
			b, err := oci.Marshal(spec)
			if err != nil {
				return exitcode.Failed(err)
			}
			fmt.Fprint(c.App.Writer, string(b))
			return nil
		},
	}
}
