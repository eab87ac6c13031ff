//go:build !linux

package pid1

// Run refuses: loki-init needs Linux PID namespaces.
func Run(Config) error { return refuse(StageInitialization, ErrUnsupported) }

// Armed is nothing here.
type Armed struct{}

// Arm does nothing here.
func Arm(Config) *Armed { return nil }
