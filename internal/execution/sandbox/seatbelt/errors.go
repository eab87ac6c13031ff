//go:build unix

package seatbelt

import "errors"

// The refusals of Wrap and Probe. Their texts are the reference's, since
// they end up in an execution's launch_error.
var (
	ErrNotMacOS        = errors.New("LOKI host Seatbelt is available only on macOS")
	ErrNoSandboxExec   = errors.New("LOKI host Seatbelt requires /usr/bin/sandbox-exec")
	ErrProbeDigest     = errors.New("LOKI host Seatbelt kernel probe is missing or invalid")
	ErrProbeFailed     = errors.New("Seatbelt kernel smoke probe failed")
	ErrProbeUnfinished = errors.New("Seatbelt kernel smoke probe did not finish")
	ErrNoFreePort      = errors.New("no reserved port was free for the Seatbelt probe")
)
