package none

import (
	"os"
	"strconv"

	"github.com/loki-sh/loki/internal/pid1/procio"
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
		n, ok := procio.Wchar(b)
		if !ok {
			return 0, false
		}
		total += n
	}
	return total, true
}
