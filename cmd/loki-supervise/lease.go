package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/cmd/internal/sessionflags"
	"github.com/loki-sh/loki/internal/exitcode"
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

--await-owner D is for a holder whose stdin is open before any owner is there (a
Pod's sidecar with stdin: true): it renews for at most D waiting for the owner's
first byte, then only until stdin's EOF; no byte within D stops it (124). A
control dir that already holds a lease is never renewed (125): the holder was
restarted (a sidecar is) after its owner left, and renewing then would keep the
session alive with no owner.

Example:
  loki-supervise lease --control-dir /run/me/s1/control < /run/me/s1/owner.fifo`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "control-dir", Usage: "the control dir loki-init watches (required; 0700, or 0750 with the init's group, made by you)"},
			&cli.DurationFlag{Name: "renew-interval", Value: lease.DefaultRenew, Usage: "how often the lease is renewed (shorter than loki-init's -lease-duration)"},
			&cli.DurationFlag{Name: "await-owner", Usage: "renew only for an owner whose first byte arrives within this; never renew a dir that already holds a lease"},
		},
		Action: func(c *cli.Context) error {
			dir := c.String("control-dir")
			if dir == "" {
				return usage("lease: --control-dir DIR is required")
			}
			if err := sessionflags.PositiveDurations(c, "renew-interval"); err != nil {
				return err
			}
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return usage("lease: --control-dir %s: not a directory", dir)
			}
			await := c.Duration("await-owner")
			if await < 0 {
				return usage("lease: --await-owner %v: must not be negative", await)
			}
			if _, err := os.Lstat(filepath.Join(dir, lease.FileName)); await > 0 && err == nil {
				return exitcode.Refused(fmt.Errorf("lease: %s already holds a lease: this holder was restarted after its owner left; not renewing", dir))
			}
			w, err := newLeaseWriter(dir)
			if err != nil {
				return notLaunched(fmt.Errorf("lease: %v", err))
			}
			defer w.Close()
			return holdLease(w, c.Duration("renew-interval"), await, os.Stdin)
		},
	}
}

// newLeaseWriter writes the lease 0600, or 0640 with the dir's group when
// the holder's own dir gives its group access (an init running as another
// user). A dir of someone else's (a Pod's emptyDir, 0777 root's) gets
// 0600: there the holder runs as the agent's user.
func newLeaseWriter(dir string) (*lease.Writer, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if gid, ok := groupOf(st); ok && st.Mode()&0o050 != 0 && gid != os.Getegid() && ownerOf(st) == os.Geteuid() {
		return lease.NewGroupWriter(dir, gid)
	}
	return lease.NewWriter(dir)
}

// holdLease renews w every interval until owner reaches EOF (or fails) or
// a termination signal arrives. With await > 0, the owner's first byte
// must arrive within await.
func holdLease(w *lease.Writer, interval, await time.Duration, owner io.Reader) error {
	ended, hello := make(chan struct{}), make(chan struct{})
	go func() {
		var b [1]byte
		if n, _ := io.ReadFull(owner, b[:]); n == 1 {
			close(hello)
			io.Copy(io.Discard, owner)
		}
		close(ended)
	}()
	var deadline <-chan time.Time
	if await > 0 {
		t := time.NewTimer(await)
		defer t.Stop()
		deadline = t.C
	}
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
		case <-hello:
			hello, deadline = nil, nil
		case <-deadline:
			return exitcode.Timeout(fmt.Errorf("lease: no owner within --await-owner %v; not renewing", await))
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

func ownerOf(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

func groupOf(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Gid), true
}
