package none

import (
	"bytes"
	"os"
	"strconv"
)

// Writes is the sum of the bytes the lineage's live members wrote
// (/proc/PID/io wchar; a process's count takes in its reaped children's):
// the single-shot rule reads any change as output still being written,
// even a write to a file (fail closed). ok is false when a count cannot
// be read.
func (p *process) Writes() (int64, bool) {
	if err := p.r.Refresh(); err != nil {
		return 0, false
	}
	members := p.r.Members()
	var total int64
	for _, id := range members {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(id.PID()) + "/io")
		if err != nil {
			return 0, false
		}
		n, ok := wchar(b)
		if !ok {
			return 0, false
		}
		total += n
	}
	return total, true
}

// wchar is the wchar field of a /proc/PID/io file.
func wchar(b []byte) (int64, bool) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("wchar: ")); ok {
			n, err := strconv.ParseInt(string(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
