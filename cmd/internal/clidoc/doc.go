// Package clidoc writes a CLI's manual page and shell completions from
// its urfave/cli command definitions, so that neither is ever written by
// hand nor drifts from what the binary accepts: every command, subcommand
// and flag the definitions hold appears in the page and completes in
// bash, zsh and fish, and a flag with a fixed set of values completes
// those values.
package clidoc
