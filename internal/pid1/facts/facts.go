package facts

import (
	"strconv"
	"strings"
)

// Socket is the facts socket's name in the control dir.
const Socket = "facts"

// The end classes. The first four are also the classes of pid1's
// refusal lines (its sentinels' text).
const (
	PeerSignaled = "peer-signaled"  // the peer was killed by a signal nobody forwarded
	OutputLost   = "output-lost"    // output could not be delivered
	OutputHeld   = "output-held"    // output still held open 1 s after the peer exited
	EOFCut       = "eof-cut-output" // the stdin-EOF rule cut a peer still writing

	Exit         = "exit"          // the peer's own code
	EOFEnded     = "eof-ended"     // the stdin-EOF rule ended an idle peer (0)
	Stopped      = "stopped"       // a forwarded signal ended the peer
	Shutdown     = "shutdown"      // the grace after a forwarded signal ran out
	LeaseExpired = "lease-expired" // no renewal within the lease
)

// End is how the run ended. Signal, Code are 0 when they do not apply;
// Out and In, the bytes the init's forwarders moved, are -1 when none
// did (direct stdio).
type End struct {
	Class   string
	Stage   string
	Signal  int
	Code    int
	Out, In int64
}

// Line is the "end" line (without the newline).
func (e End) Line() string {
	var b strings.Builder
	b.WriteString("end class=" + e.Class)
	if e.Stage != "" {
		b.WriteString(" stage=" + e.Stage)
	}
	if e.Signal > 0 {
		b.WriteString(" signal=" + strconv.Itoa(e.Signal))
	}
	if e.Class == Exit {
		b.WriteString(" code=" + strconv.Itoa(e.Code))
	}
	if e.Out >= 0 {
		b.WriteString(" out=" + strconv.FormatInt(e.Out, 10))
	}
	if e.In >= 0 {
		b.WriteString(" in=" + strconv.FormatInt(e.In, 10))
	}
	return b.String()
}

// PeerLine is the "peer" line (without the newline).
func PeerLine(pid int) string { return "peer " + strconv.Itoa(pid) }

// SayLine is the "say" line (without the newline).
func SayLine(s string) string { return "say " + s }

// Told is what a host read: the first of each line counts.
type Told struct {
	PeerNS int // the peer's pid in the init's namespace (0: not told)
	Ended  bool
	End    End
	Say    string
}

// New is nothing told yet.
func New() Told { return Told{End: End{Out: -1, In: -1}} }

// Parse applies one line (without the newline); anything else is
// ignored, and so is a field that is not what its key says.
func (t *Told) Parse(line string) {
	word, rest, _ := strings.Cut(line, " ")
	switch word {
	case "peer":
		if n, err := strconv.Atoi(rest); err == nil && n > 0 && t.PeerNS == 0 {
			t.PeerNS = n
		}
	case "end":
		if t.Ended {
			return
		}
		t.Ended = true
		for field := range strings.FieldsSeq(rest) {
			k, v, _ := strings.Cut(field, "=")
			n, err := strconv.ParseInt(v, 10, 64)
			switch {
			case k == "class":
				t.End.Class = v
			case k == "stage":
				t.End.Stage = v
			case err != nil || n < 0 || n > 1<<62:
			case k == "signal":
				t.End.Signal = int(n)
			case k == "code":
				t.End.Code = int(n)
			case k == "out":
				t.End.Out = n
			case k == "in":
				t.End.In = n
			}
		}
	case "say":
		if t.Say == "" {
			t.Say = rest
		}
	}
}
