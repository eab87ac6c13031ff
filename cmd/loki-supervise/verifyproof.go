package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/canonjson"
	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/proof"
)

func verifyProofCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify-proof",
		Usage:     "check a build receipt's integrity and print the verdict as JSON",
		ArgsUsage: "FILE",
		Description: "Recomputes verification.hash over the canonical JSON of the receipt, checks a\n" +
			"detached signature FILE.asc or FILE.sig with gpg when both exist, re-derives\n" +
			"the headline from the receipt's facts and checks its cost figures. Prints\n" +
			"{hash_ok, gpg_ok, generator_trusted, headline_consistent, degraded, reason,\n" +
			"reasons, ok, cost_coherent}.\n\n" +
			"A receipt that cannot be read or parsed prints the same object with ok false\n" +
			"and the reason, and one line on stderr.\n\n" +
			"Exit status: 0 ok, 1 not ok, 2 unreadable or not a JSON object.",
		Action: verifyProofAction,
	}
}

func verifyProofAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return exitcode.Usage(errors.New("verify-proof: expected exactly one FILE (see --help)"))
	}
	file := c.Args().First()
	in, err := proof.VerifyFile(file)
	if err != nil {
		// A program reading stdout gets its one object even now.
		reason := fmt.Sprintf("receipt not verified: %v", err)
		if errors.Is(err, proof.ErrUnreadable) {
			reason = fmt.Sprintf("receipt unreadable: missing, not a regular file, a symlink, or larger than %d bytes", proof.MaxReceiptSize)
		}
		if out, jerr := canonjson.Marshal(proof.EmptyIntegrity(reason)); jerr == nil {
			fmt.Fprintf(c.App.Writer, "%s\n", out)
		}
		if errors.Is(err, proof.ErrUnreadable) {
			return exitcode.Usage(fmt.Errorf("verify-proof: cannot read %s (missing, not a regular file, a symlink, or larger than %d bytes)", file, proof.MaxReceiptSize))
		}
		return exitcode.Usage(fmt.Errorf("verify-proof: %s: %v", file, err))
	}
	out, err := canonjson.Marshal(in)
	if err != nil {
		return exitcode.Usage(fmt.Errorf("verify-proof: %v", err))
	}
	fmt.Fprintf(c.App.Writer, "%s\n", out)
	if !in.OK {
		return exitcode.Failed(nil)
	}
	return nil
}
