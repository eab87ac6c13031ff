package pid1

import "testing"

// The stdin-EOF rule's baseline: a move under way when the EOF is seen
// may already be the host's (it read the answer, then hung up), so it
// counts as moved before the EOF; a move that starts after the EOF, or
// one still under way, is the peer still writing.
func TestMeterBaseline(t *testing.T) {
	cases := []struct {
		name    string
		steps   func(m *meter)
		writing bool
	}{
		{"no EOF seen", func(m *meter) { m.start(); m.end(5) }, false},
		{"idle at EOF", func(m *meter) { m.start(); m.end(5); m.markEOF() }, false},
		{"move under way at EOF", func(m *meter) { m.start(); m.markEOF(); m.end(5) }, false},
		{"move under way at EOF, then an empty one", func(m *meter) { m.start(); m.markEOF(); m.end(5); m.start(); m.end(0) }, false},
		{"move after EOF", func(m *meter) { m.markEOF(); m.start(); m.end(5) }, true},
		{"move under way at EOF, then another", func(m *meter) { m.start(); m.markEOF(); m.end(5); m.start(); m.end(1) }, true},
		{"move under way at EOF lasts", func(m *meter) { m.start(); m.end(5); m.start(); m.markEOF() }, true},
		{"move under way at the window's end", func(m *meter) { m.markEOF(); m.start() }, true},
		{"a second EOF takes no new baseline", func(m *meter) { m.markEOF(); m.start(); m.end(5); m.markEOF() }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := new(meter)
			tc.steps(m)
			if got := m.movedSinceEOF(); got != tc.writing {
				t.Fatalf("movedSinceEOF %v, want %v", got, tc.writing)
			}
		})
	}
}
