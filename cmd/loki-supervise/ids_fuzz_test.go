package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/exitcode"
)

// FuzzOneID drives the id argument parsing of stop/status/logs through a
// real urfave/cli app. The input is the argument list, NUL-separated.
// Every list is either refused with exit code 2 and a message that does
// not end the line early, or yields exactly the canonical id of its one
// non-flag argument plus only the boolean flags the command declared.
func FuzzOneID(f *testing.F) {
	for _, s := range []string{"0b7c1a8e-4f6d-4d2a-9c3b-5e8f7a6d1c20", "0b7c1a8e-4f6d-4d2a-9c3b-5e8f7a6d1c20\x00--json",
		"--json\x000B7C1A8E4F6D4D2A9C3B5E8F7A6D1C20", "{0b7c1a8e-4f6d-4d2a-9c3b-5e8f7a6d1c20}\x00-follow", "../../etc/passwd",
		"a\x00b", "", "--", "-json\x00--json\x00urn:uuid:0b7c1a8e-4f6d-4d2a-9c3b-5e8f7a6d1c20", "0b7c1a8e-4f6d-4d2a-9c3b-5e8f7a6d1c20\x00--bogus"} {
		f.Add(s)
	}
	f.Setenv("LOKI_DATA_DIR", f.TempDir())
	f.Fuzz(func(t *testing.T, in string) {
		var args []string
		if in != "" {
			args = strings.Split(in, "\x00")
		}
		var (
			id       state.ID
			trailing map[string]bool
			called   bool
		)
		app := &cli.App{
			Name:           "loki-supervise",
			ExitErrHandler: func(*cli.Context, error) {},
			Writer:         discard{}, ErrWriter: discard{},
			Commands: []*cli.Command{{
				Name:  "status",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "json"}, &cli.BoolFlag{Name: "follow"}},
				Action: func(c *cli.Context) error {
					called = true
					var err error
					_, id, trailing, err = oneID(c, "json", "follow")
					return err
				},
			}},
		}
		err := app.Run(append([]string{"loki-supervise", "status"}, args...))
		if !called {
			return // urfave/cli refused the flags itself
		}
		if err != nil {
			if exitcode.Code(err) != 2 {
				t.Fatalf("%q: exit %d for %v", args, exitcode.Code(err), err)
			}
			if errors.Is(err, state.ErrInvalidID) && strings.Contains(err.Error(), "\n") && !strings.Contains(in, "\n") {
				t.Fatalf("message gained a line break: %q", err.Error())
			}
			return
		}
		if !id.Valid() {
			t.Fatalf("%q: accepted without an id", args)
		}
		for k := range trailing {
			if k != "json" && k != "follow" {
				t.Fatalf("%q: unknown trailing flag %q", args, k)
			}
		}
		again, err := state.ParseID(id.String())
		if err != nil || again != id {
			t.Fatalf("%q: id %q is not canonical", args, id)
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
