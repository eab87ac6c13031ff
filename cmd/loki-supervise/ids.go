package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/exitcode"
)

// oneID parses the single execution id argument of stop/status/logs and
// opens the store. urfave/cli stops parsing flags at the first argument, so
// the command's boolean flags are also accepted after the id
// (`status UUID --json`); trailing reports which were found there.
func oneID(c *cli.Context, bools ...string) (store *state.Store, id state.ID, trailing map[string]bool, err error) {
	trailing = map[string]bool{}
	var rest []string
	for _, a := range c.Args().Slice() {
		name := strings.TrimLeft(a, "-")
		if strings.HasPrefix(a, "-") && slices.Contains(bools, name) {
			trailing[name] = true
			continue
		}
		rest = append(rest, a)
	}
	if len(rest) != 1 {
		return nil, id, nil, exitcode.Usage(fmt.Errorf("%s takes exactly one execution id (see --help)", c.Command.Name))
	}
	if id, err = state.ParseID(rest[0]); err != nil {
		return nil, id, nil, exitcode.Usage(fmt.Errorf("%q: %w", rest[0], err))
	}
	if store, err = state.DefaultStore(); err != nil {
		return nil, id, nil, exitcode.Failed(err)
	}
	return store, id, trailing, nil
}

// readErr turns a failed read of a record into a one-line user error.
func readErr(id state.ID, err error) error {
	if errors.Is(err, state.ErrNotFound) {
		return exitcode.Failed(fmt.Errorf("no such execution: %s", id))
	}
	return exitcode.Failed(err)
}
