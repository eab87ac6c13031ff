package pid1

import "sync"

// meter counts what one forwarder moved, and keeps the stdin-EOF rule's
// baseline: what it had moved by the time host stdin's end was seen.
//
// A count taken after the move is late: the host may read the bytes, and
// hang up its stdin, while the forwarder is still between the system call
// that moved them and its count. The rule then saw them as written after
// the EOF and cut an idle peer with 125. So a forwarder brackets each
// move (start, end), and a move under way when the EOF is seen counts
// as moved before it. The wait for data is never inside the bracket, so
// only a move that started after the EOF was seen, or one still under way
// at the window's end (its reader is not reading), counts as the peer
// still writing.
type meter struct {
	mu     sync.Mutex
	moved  int64
	moving bool  // a move is under way: the host may have its bytes already
	eof    bool  // host stdin's end was seen
	atEOF  int64 // the baseline; -1 while a move under way at the EOF lasts
}

var (
	// outMeter and errMeter count the peer's stdout and stderr moved to
	// fd 1 and 2, inMeter host stdin moved to the peer (a terminal's
	// output is ttyBytes). Their totals are what the init reports to its
	// host (facts_linux.go).
	outMeter, errMeter, inMeter meter
)

// start marks a move under way.
func (m *meter) start() {
	m.mu.Lock()
	m.moving = true
	m.mu.Unlock()
}

// end records the move under way, which moved n bytes (0 included).
func (m *meter) end(n int64) {
	m.mu.Lock()
	m.moved += n
	m.moving = false
	if m.eof && m.atEOF < 0 {
		m.atEOF = m.moved
	}
	m.mu.Unlock()
}

// markEOF takes the baseline now, or at the end of the move under way.
func (m *meter) markEOF() {
	m.mu.Lock()
	if !m.eof {
		m.eof, m.atEOF = true, m.moved
		if m.moving {
			m.atEOF = -1
		}
	}
	m.mu.Unlock()
}

// movedSinceEOF reports output moved after the baseline, or a move under
// way at the EOF or now: all of it is the peer still writing. Without an
// EOF seen it is false.
func (m *meter) movedSinceEOF() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.eof && (m.atEOF < 0 || m.moving || m.moved != m.atEOF)
}

// total is every byte moved so far.
func (m *meter) total() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.moved
}
