package backends

import (
	"slices"
	"testing"
)

// TestTable: a row is found by its name alone, and a row that needs no
// tree selects itself by its --isolation value.
func TestTable(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range All() {
		if seen[b.Name] {
			t.Errorf("two rows called %q", b.Name)
		}
		seen[b.Name] = true
		if b.require == nil || b.flags == nil {
			t.Errorf("%s: no requirement check or no flags", b.Name)
		}
		if !b.Container {
			if got, want := b.flags(t, Busybox), []string{"--isolation", b.Isolation}; !slices.Equal(got, want) {
				t.Errorf("%s selects itself by %q, want %q", b.Name, got, want)
			}
		}
	}
	if got := Of("none", "namespace"); got[0].Name != "none" || got[1].Name != "namespace" {
		t.Errorf("Of keeps no order: %v", got)
	}
}
