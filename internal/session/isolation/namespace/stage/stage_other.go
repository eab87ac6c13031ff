//go:build !linux

package stage

import "github.com/loki-sh/loki/internal/exitcode"

// Run is unsupported outside Linux.
func Run([]string) ([]string, bool, error) { return nil, false, exitcode.NotLaunched(nil) }
