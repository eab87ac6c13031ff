// Package calm calms the runtime's monitor thread (package sysmon) as
// soon as a program starts: imported for its init, which runs before the
// package inits of everything that imports more, while the monitor polls
// at its fastest.
package calm

import "github.com/loki-sh/loki/internal/proc/sysmon"

func init() { sysmon.Calm(sysmon.Slack) }
