package attach

import "errors"

var (
	// ErrAttach: the Pod, its containers or their attach stream could not
	// be reached.
	ErrAttach = errors.New("cannot attach")
	// ErrCut: the attach ended before the agent's output was known to be
	// complete.
	ErrCut = errors.New("attach cut: the agent's output may be incomplete")
)
