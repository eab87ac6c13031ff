package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/proof/treedigest"
)

func digestCommand() *cli.Command {
	return &cli.Command{
		Name:      "digest",
		Usage:     "print the manifest-v3 tree digest of a git work tree",
		ArgsUsage: "DIR",
		Description: "Prints the SHA-256 that proof receipts record as tree_sha256: one entry per path\n" +
			"in the git index or on disk (ignored files included; .git, .loki and the\n" +
			"dependency/cache directories listed in the manifest excluded), with content\n" +
			"hashes, modes, symlink targets and submodule commits. DIR must be the top\n" +
			"level of a git work tree. --manifest prints the canonical JSON that is hashed.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "manifest", Usage: "print the manifest (canonical JSON) instead of its digest"},
		},
		Action: digestAction,
	}
}

func digestAction(c *cli.Context) error {
	// urfave/cli stops at the first argument; accept DIR --manifest too.
	args, manifest := splitBoolFlag(c, "manifest")
	if len(args) != 1 {
		return exitcode.Usage(errors.New("digest: expected exactly one DIR (see --help)"))
	}
	dir := args[0]
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return exitcode.Usage(fmt.Errorf("digest: %s is not a directory", dir))
	}
	m, err := treedigest.Manifest(c.Context, dir)
	switch {
	case errors.Is(err, treedigest.ErrNotWorkTree):
		return exitcode.Failed(fmt.Errorf("digest: %s is not the top level of a git work tree", dir))
	case err != nil:
		return exitcode.Failed(fmt.Errorf("digest: %v", err))
	}
	if manifest {
		_, err = fmt.Fprintf(c.App.Writer, "%s\n", m)
	} else {
		_, err = fmt.Fprintln(c.App.Writer, treedigest.SumHex(m))
	}
	return err
}
