package testutil

import (
	"fmt"
	"testing"

	"github.com/loki-sh/loki/internal/landlock"
)

// RequireLandlock skips (or fails under CI, whose kernel has it) unless
// the kernel's Landlock ABI is at least abi.
func RequireLandlock(t testing.TB, abi int) {
	t.Helper()
	if got := landlock.ABI(); got < abi {
		skipOrFail(t, fmt.Sprintf("this kernel has Landlock ABI %d (%d needed)", got, abi))
	}
}
