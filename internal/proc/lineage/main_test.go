package lineage

import (
	"os"
	"testing"
)

// TestMain lets this test binary act as the exec gate of the runners it
// starts.
func TestMain(m *testing.M) {
	MaybeRunGate()
	os.Exit(m.Run())
}
