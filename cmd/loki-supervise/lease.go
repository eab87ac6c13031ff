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

Connect stdin to the session's owner (kubectl exec -i, ssh, a socket) so that the
owner's death, not the holder's own, ends the session. Bytes on stdin are ignored.

Example:
  loki-supervise lease --control-dir /run/me/s1/control < /run/me/s1/owner.fifo`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "control-dir", Usage: "the control dir loki-init watches (required; 0700, made by you)"},
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
			w, err := lease.NewWriter(dir)
			if err != nil {
				return notLaunched(fmt.Errorf("lease: %v", err))
			}
			defer w.Close()
			return holdLease(w, c.Duration("renew-interval"), os.Stdin)
		},
	}
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
