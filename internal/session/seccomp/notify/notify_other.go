//go:build !linux

package notify

// Refusal is one refused call.
type Refusal struct {
	Syscall string
	PID     int
	Comm    string
}

// Notifier is unavailable off Linux.
type Notifier struct{}

// Serve is unavailable off Linux: there is no listener to serve.
func Serve(fd int, report func(Refusal)) *Notifier { return nil }

// Close does nothing off Linux.
func (n *Notifier) Close() {}
