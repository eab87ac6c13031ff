package execution

import "time"

// utcNow renders the current time the way the reference does
// (datetime.isoformat with "+00:00" spelled "Z"): microseconds, omitted
// entirely when they are zero.
func utcNow() string { return formatUTC(time.Now()) }

func formatUTC(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000000Z")
}
