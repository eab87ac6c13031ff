package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"
	"sigs.k8s.io/yaml"

	"github.com/loki-sh/loki/cmd/internal/kubecli"
	"github.com/loki-sh/loki/cmd/internal/sessionflags"
	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/isolation/kubernetes"
	"github.com/loki-sh/loki/internal/session/isolation/mounts"
)

// podFlags are the flags pod-spec reads; any other flag given is refused
// (exit 2), so that no session flag, today's or a later one, is dropped.
var podFlags = map[string]bool{
	"image": true, "loki-image": true, "name": true, "namespace": true, "owner-wait": true, "yaml": true, "cwd": true,
	"user": true, "userns": true, "network": true, "fs": true, "write": true, "hide": true, "allow-host": true,
	"pids-max": true, "memory-max": true, "cpu-max": true, "bind": true, "writable-rootfs": true,
	"lease-duration": true, "renew-interval": true, "poll-interval": true, "grace": true, "wait-after-eof": true, "eof": true,
	"tty": true, // asked of the Pod's capabilities, which refuse it
}

// podWhy says why a session flag has no place in a Pod, where that helps.
var podWhy = map[string]string{
	"isolation":    "the Pod is the isolation",
	"stop-timeout": "the Pod's terminationGracePeriodSeconds follows --grace",
	"control-root": "the control dir is the Pod's own volume", "runtime": "the node's runtime class decides",
	"init": "loki-init comes from --loki-image", "rootfs": "the agent's filesystem is --image",
	"env": "the environment travels in the prelude: give it to attach", "no-default-env": "give it to attach",
}

func podSpecCommand() *cli.Command {
	cmd := kubecli.PodSpec()
	cmd.Action = func(c *cli.Context) error {
		for _, f := range c.Command.Flags {
			name := f.Names()[0]
			if !podFlags[name] && c.IsSet(name) {
				why := podWhy[name]
				if why == "" {
					why = "it belongs to a session on this host"
				}
				return usage("pod-spec: --%s is not part of a Pod: %s", name, why)
			}
		}
		if err := sessionflags.PositiveDurations(c, append(sessionflags.Timing, "owner-wait")...); err != nil {
			return err
		}
		policy, err := sessionflags.Policy(c, nodePaths)
		if err != nil {
			return err
		}
		if err := sessionflags.AllowHosts(c, &policy); err != nil {
			return err
		}
		var binds []kubernetes.Bind
		for _, s := range *c.Generic("bind").(*repeated) {
			b, err := mounts.ParseBind(s)
			if err != nil {
				return usage("--bind %q: want SRC:DST[:ro|:rw], both paths absolute", s)
			}
			binds = append(binds, kubernetes.Bind{Source: b.Source, Destination: b.Destination, ReadOnly: b.ReadOnly})
		}
		eof, err := sessionflags.EOFRule(c)
		if err != nil {
			return err
		}
		cwd := c.String("cwd")
		if cwd == "" {
			cwd = "/"
		}
		pod, err := kubernetes.Pod(kubernetes.Options{
			Name: c.String("name"), Namespace: c.String("namespace"),
			Image: c.String("image"), LokiImage: c.String("loki-image"),
			InitArgs: session.Config{
				LeaseDuration: c.Duration("lease-duration"),
				PollInterval:  c.Duration("poll-interval"),
				Grace:         c.Duration("grace"),
				EOF:           eof,
			}.InitArgs(),
			Grace:         c.Duration("grace"),
			RenewInterval: c.Duration("renew-interval"),
			OwnerWait:     c.Duration("owner-wait"),
			Argv:          c.Args().Slice(),
			Cwd:           cwd,
			Confine:       policy, Binds: binds, WritableRootfs: c.Bool("writable-rootfs"), TTY: c.Bool("tty"),
		})
		if errors.Is(err, confine.ErrUnsupported) {
			return notLaunched(err)
		}
		if err != nil {
			return usage("pod-spec: %v", err)
		}
		b, err := json.MarshalIndent(pod, "", "  ")
		if err == nil && c.Bool("yaml") {
			b, err = yaml.JSONToYAML(b)
		}
		if err != nil {
			return exitcode.Failed(err)
		}
		fmt.Fprintln(c.App.Writer, string(b))
		return nil
	}
	return cmd
}

// nodePaths checks --write/--hide values as paths on the node (or in the
// image): absolute and clean, since nothing here can resolve them.
func nodePaths(flag string, paths []string) ([]string, error) {
	for _, p := range paths {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
			return nil, fmt.Errorf("%w: --%s %s: want an absolute, clean path on the node other than /", confine.ErrPolicy, flag, p)
		}
	}
	return paths, nil
}
