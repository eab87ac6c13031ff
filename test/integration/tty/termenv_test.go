//go:build linux

package tty

import (
	"regexp"
	"testing"
)

// TestTerminalIdentity: under -t the terminal's own variables reach the
// agent (a TUI picks its colours from COLORTERM); a secret of the host
// shell's environment still does not. Before, COLORTERM and TERM_PROGRAM
// were dropped by the allowlist on every backend.
func TestTerminalIdentity(t *testing.T) {
	for _, b := range rows() {
		t.Run(b.Name, func(t *testing.T) {
			p := newPane(t, 30, 100)
			cmd := session(t, p, b, nil, "sh", "-c", `echo "ident=[$COLORTERM|$TERM_PROGRAM|$TERM_PROGRAM_VERSION|$LOKI_SECRET]"`)
			before, after := start(p, "COLORTERM=truecolor TERM_PROGRAM=loki-term TERM_PROGRAM_VERSION=3.4 LOKI_SECRET=s3cret "+cmd)
			got := p.waitFor(regexp.MustCompile(`ident=\[([^\]\n]*)\]\s*\n`))[1]
			if code := finished(t, p, before, after); code != 0 {
				t.Fatalf("exit %d:\n%s", code, p.screen())
			}
			if want := "truecolor|loki-term|3.4|"; got != want {
				t.Errorf("the agent saw %q, want %q", got, want)
			}
		})
	}
}
