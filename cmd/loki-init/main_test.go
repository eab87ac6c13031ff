package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/pid1"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int // exit code when parsing stops the program; -1 = runs
		want pid1.Config
	}{
		{"defaults", []string{"/ctl"}, -1, pid1.Config{ControlDir: "/ctl", LeaseDuration: 5 * time.Second, PollInterval: 100 * time.Millisecond, Grace: 10 * time.Second}},
		{"all flags", []string{"-lease-duration", "3s", "-poll-interval", "50ms", "-grace", "0s", "/c"}, -1, pid1.Config{ControlDir: "/c", LeaseDuration: 3 * time.Second, PollInterval: 50 * time.Millisecond}},
		{"help", []string{"-h"}, 0, pid1.Config{}},
		{"no dir", nil, 125, pid1.Config{}},
		{"two dirs", []string{"/a", "/b"}, 125, pid1.Config{}},
		{"bad duration", []string{"-lease-duration", "soon", "/c"}, 125, pid1.Config{}},
		{"zero lease", []string{"-lease-duration", "0s", "/c"}, 125, pid1.Config{}},
		{"unknown flag", []string{"-x", "/c"}, 125, pid1.Config{}},
		{"version", []string{"--version"}, 0, pid1.Config{}},
		{"version json", []string{"--version", "--json"}, 0, pid1.Config{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			var stdout bytes.Buffer
			cfg, err := parse(tc.args, &stdout, &stderr)
			if tc.code < 0 {
				if err != nil || cfg != tc.want {
					t.Fatalf("cfg %+v err %v, want %+v", cfg, err, tc.want)
				}
				return
			}
			if got := exitcode.Code(err); err == nil || got != tc.code {
				t.Fatalf("exit %d (%v), want %d", got, err, tc.code)
			}
			if tc.code == 125 && !strings.Contains(err.Error(), "refused at initialization: usage") {
				t.Fatalf("error %q", err)
			}
		})
	}
}
