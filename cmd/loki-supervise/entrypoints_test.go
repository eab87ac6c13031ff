package main

import (
	"strings"
	"testing"
)

// matched names the internal entry point args select, "" for the CLI.
func matched(args []string) string {
	for _, e := range internalEntries {
		if e.match(args) {
			return e.name
		}
	}
	return ""
}

func TestInternalEntriesMatchOnlyTheirArgv(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"loki-supervise", "__ns-init", "-lease-duration", "5s"}, ""},
		{[]string{"loki-supervise", "__oci-cgroup-shim", "/usr/bin/crun", "run"}, "__oci-cgroup-shim"},
		{[]string{"loki-supervise", "probe", "seatbelt-payload", "o", "s", "u", "1"}, "probe seatbelt-payload"},
		{[]string{"loki-supervise", "probe", "seatbelt"}, ""},
		{[]string{"loki-supervise", "session", "--", "__ns-init"}, ""},
		{[]string{"loki-supervise", "seatbelt-payload"}, ""},
		{[]string{"loki-supervise"}, ""},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args[1:], " "), func(t *testing.T) {
			if got := matched(c.args); got != c.want {
				t.Fatalf("matched %q, want %q", got, c.want)
			}
		})
	}
}

// The CLI has no hidden commands left: every role that is not a command
// is in the table, and no command shares a name with one.
func TestCommandsAreTheCLIOnly(t *testing.T) {
	for _, c := range newApp().Commands {
		if c.Hidden || strings.HasPrefix(c.Name, "__") || matched([]string{"loki-supervise", c.Name}) != "" {
			t.Errorf("command %q is an internal entry point", c.Name)
		}
		for _, s := range c.Subcommands {
			if s.Hidden || matched([]string{"loki-supervise", c.Name, s.Name}) != "" {
				t.Errorf("subcommand %q %q is an internal entry point", c.Name, s.Name)
			}
		}
	}
}
