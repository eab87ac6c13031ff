package deadline

import (
	"os"
	"testing"

	"github.com/loki-sh/loki/internal/proc/lineage"
)

// TestMain lets this test binary act as lineage's exec gate.
func TestMain(m *testing.M) {
	lineage.MaybeRunGate()
	os.Exit(m.Run())
}
