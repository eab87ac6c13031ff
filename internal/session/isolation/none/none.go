//go:build unix

package none

import (
	"errors"
	"time"
)

// Name is the --isolation value of this backend.
const Name = "none"

// ErrEscaped reports a session whose lineage could not be fully stopped or
// observed: something it started may still be running.
var ErrEscaped = errors.New("descendants of the session may have survived it")

// refreshEvery is how often the lineage is refreshed while the peer runs:
// a descendant seen as the child of a live member is tracked even if it
// later leaves every other trace.
const refreshEvery = time.Second

// Backend runs the peer directly, as a tracked lineage.
type Backend struct{}

func (Backend) Name() string { return Name }
