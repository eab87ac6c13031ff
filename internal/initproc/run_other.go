//go:build !linux

package initproc

// Run refuses: loki-init needs Linux PID namespaces.
func Run(Config) error { return refuse(StageInitialization, ErrUnsupported) }
