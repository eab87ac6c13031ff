package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/lease"
)

func leaseCommand() *cli.Command {
	return &cli.Command{
		Name:      "lease",
		Usage:     "hold the lease of a control dir for a loki-init run elsewhere (a container, a Pod)",
		UsageText: "loki-supervise lease --control-dir DIR [--renew-interval D] < OWNER-STREAM",
		Description: `The lease-only role, for a loki-init you start yourself (loki-supervise oci-spec,
a containerd task, a Pod's agent container, see docs/cluster.md): writes the first
lease value into DIR, renews it every --renew-interval while its stdin stays open,
and stops at stdin EOF, SIGTERM or SIGINT. It then exits 0 and the lease expires:
loki-init ends its session within its lease duration (124).

A loki-init that runs as another user (--user, or as root of a private user
namespace, oci-spec's default as root) reads the lease through its group: make
DIR 0750 with that group (oci-spec's linux.gidMappings[0].hostID) and every lease
is written 0640 with DIR's group.

Connect stdin to the session's owner (kubectl exec -i, ssh, a socket) so that the
owner's death, not the holder's own, ends the session. Bytes on stdin are ignored.

Example:
  loki-supervise lease --control-dir /run/me/s1/control < /run/me/s1/owner.fifo`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "control-dir", Usage: "the control dir loki-init watches (required; 0700, or 0750 with the init's group, made by you)"},
			&cli.DurationFlag{Name: "renew-interval", Value: lease.DefaultRenew, Usage: "how often the lease is renewed (shorter than loki-init's -lease-duration)"},
		},
		Action: func(c *cli.Context) error {
			dir := c.String("control-dir")
			if dir == "" {
				return usage("lease: --control-dir DIR is required")
			}
			if err := positiveDurations(c, "renew-interval"); err != nil {
				return err
			}
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return usage("lease: --control-dir %s: not a directory", dir)
			}
			w, err := newLeaseWriter(dir)
			if err != nil {
				return notLaunched(fmt.Errorf("lease: %v", err))
			}
			defer w.Close()
			return holdLease(w, c.Duration("renew-interval"), os.Stdin)
		},
	}
}

// newLeaseWriter writes the lease 0600, or 0640 with the dir's group when
// the dir gives its group access (an init running as another user).
func newLeaseWriter(dir string) (*lease.Writer, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if gid, ok := groupOf(st); ok && st.Mode()&0o050 != 0 && gid != os.Getegid() {
		return lease.NewGroupWriter(dir, gid)
	}
	return lease.NewWriter(dir)
}

// holdLease renews w every interval until owner reaches EOF (or fails) or
// a termination signal arrives.
func holdLease(w *lease.Writer, interval time.Duration, owner io.Reader) error {
	ended := make(chan struct{})
	go func() {
		io.Copy(io.Discard, owner)
		close(ended)
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	failing := false
	for {
		select {
		case <-ended:
			return nil
		case <-sigs:
			return nil
		case <-tick.C:
			err := w.Renew()
			if err != nil && !failing {
				fmt.Fprintf(os.Stderr, "loki-supervise: lease renewal failing: %v\n", err)
			}
			failing = err != nil
		}
	}
}

func groupOf(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Gid), true
}
