package main

import (
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestCachedFlagNames: every flag of every command answers Names() as
// urfave's own flag does, so the wrappers change no lookup; and the
// session's flags are wrapped, or each of its starts pays urfave's scan.
func TestCachedFlagNames(t *testing.T) {
	app := newApp()
	wrapped := 0
	walk(app.Commands, "", func(c *cli.Command, path string) {
		for _, f := range c.Flags {
			var own []string
			switch f := f.(type) {
			case stringFlag:
				own, wrapped = f.StringFlag.Names(), wrapped+1
			case boolFlag:
				own, wrapped = f.BoolFlag.Names(), wrapped+1
			case durationFlag:
				own, wrapped = f.DurationFlag.Names(), wrapped+1
			case genericFlag:
				own, wrapped = f.GenericFlag.Names(), wrapped+1
			case intFlag:
				own, wrapped = f.IntFlag.Names(), wrapped+1
			default:
				if c.Name == "session" {
					t.Errorf("session flag %v (%T) is not wrapped", f.Names(), f)
				}
				continue
			}
			if !slices.Equal(f.Names(), own) {
				t.Errorf("%s: flag names %q, urfave's %q", path, f.Names(), own)
			}
		}
	})
	if wrapped == 0 {
		t.Fatal("no flag is wrapped")
	}
}
