package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/session"
)

func installInitCommand() *cli.Command {
	return &cli.Command{
		Name:      "install-init",
		Usage:     "copy the loki-init next to this binary into DIR (a Pod's init container)",
		UsageText: "loki-supervise install-init DIR",
		Description: `Copies loki-init (found as session does: next to loki-supervise, else on PATH)
to DIR/loki-init, mode 0555, through a temporary file and a rename, so that a
container starting from DIR never runs a half-written init. The "loki-install"
init container of pod-spec's Pod runs it from an image that needs nothing else
(FROM scratch). Exit 127 when loki-init is missing or DIR is not writable.`,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usage("install-init: want one DIR")
			}
			src, err := session.FindInit("")
			if err != nil {
				return notLaunched(err)
			}
			if err := installInit(src, c.Args().First()); err != nil {
				return notLaunched(fmt.Errorf("install-init: %v", err))
			}
			return nil
		},
	}
}

func installInit(src, dir string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(dir, ".loki-init-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o555); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, "loki-init"))
}
