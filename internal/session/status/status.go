package status

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Kind is what was refused.
type Kind string

// The kinds, in the order summaries and counts list them.
const (
	Write   Kind = "write"
	Read    Kind = "read"
	Exec    Kind = "exec"
	Connect Kind = "connect"
	Egress  Kind = "egress"
	Syscall Kind = "syscall"
	Pids    Kind = "pids"
	Memory  Kind = "memory"
)

// Kinds lists every kind.
var Kinds = []Kind{Write, Read, Exec, Connect, Egress, Syscall, Pids, Memory}

// Reason is why a session ended: one of a fixed set.
type Reason string

// The reasons.
const (
	PeerExit         Reason = "peer-exit"         // the peer exited with its own code
	PeerSignal       Reason = "peer-signal"       // the peer (or the init) died by a signal nobody here sent
	LeaseExpired     Reason = "lease-expired"     // 124: no renewal within the lease
	InputLost        Reason = "input-lost"        // the session's stdin relay failed (125)
	EOFEnded         Reason = "eof-ended"         // stdin's EOF rule ended a peer that sat idle (code 0)
	EOFCutOutput     Reason = "eof-cut-output"    // stdin's EOF rule cut a peer that was still writing (125)
	OutputLost       Reason = "output-lost"       // loki-init could not deliver the peer's output (125)
	OutputHeld       Reason = "output-held"       // something the peer left still held its output 1 s after it exited (125)
	LimitMemory      Reason = "limit-memory"      // the OOM killer killed in the session's cgroup
	LimitPids        Reason = "limit-pids"        // forks were refused at --pids-max
	RefusedStart     Reason = "refused-start"     // the session never ran (127, or a command found nowhere)
	Refused          Reason = "refused"           // 125 otherwise: loki-init refused before the peer ran, or an init that tells no facts, or none's lineage escaped
	SupervisorSignal Reason = "supervisor-signal" // a signal to the supervisor was forwarded, or it killed the session
)

// Reasons lists every reason.
var Reasons = []Reason{PeerExit, PeerSignal, LeaseExpired, InputLost, EOFEnded, EOFCutOutput,
	OutputLost, OutputHeld, LimitMemory, LimitPids, RefusedStart, Refused, SupervisorSignal}

// Start is the start event's content.
type Start struct {
	Session string `json:"session"`
	Backend string `json:"backend"`
	// InitPID is loki-init's pid as the host sees it, PeerPID the peer's,
	// where the backend knows them (0: not known, omitted).
	InitPID int    `json:"init_pid,omitempty"`
	PeerPID int    `json:"peer_pid,omitempty"`
	UserNS  string `json:"userns"` // private | host
	UID     int    `json:"uid"`    // the ids the peer runs with, as the host sees them
	GID     int    `json:"gid"`
	Policy  Policy `json:"policy"`
	// Observes are the refusal kinds this backend and host report;
	// Cannot says, for every other kind, why not.
	Observes []Kind          `json:"observes"`
	Cannot   map[Kind]string `json:"cannot"`
}

// Policy is the effective confinement.
type Policy struct {
	FS       string   `json:"fs"` // confined | host
	Writable []string `json:"writable"`
	ReadOnly []string `json:"read_only"`
	Hidden   []string `json:"hidden"`
	Network  string   `json:"network"`
	Allow    []string `json:"allow_hosts"`
	Limits   Limits   `json:"limits"`
	Syscalls string   `json:"syscalls"` // the syscall policy's name
}

// Limits are the cgroup limits (0: none).
type Limits struct {
	PidsMax   int64   `json:"pids_max"`
	MemoryMax int64   `json:"memory_max"`
	CPUMax    float64 `json:"cpu_max"`
}

// End is the end event's content (Recorder.End fills in the counts).
type End struct {
	Code   int    `json:"code"`
	Reason Reason `json:"reason"`
	// Signal is the signal of a peer-signal or supervisor-signal end.
	Signal int `json:"signal,omitempty"`
	// Duration is the whole session's, Ran the peer's part of it (from
	// the backend's start), in seconds.
	Duration float64 `json:"duration"`
	Ran      float64 `json:"ran"`
	// BytesIn are the stdin bytes the supervisor relayed, BytesOut the
	// output bytes loki-init forwarded (it tells them, package facts);
	// -1 where nothing counted them: the peer had the client's own
	// descriptor (direct stdio, the none backend).
	BytesIn  int64 `json:"bytes_in"`
	BytesOut int64 `json:"bytes_out"`
}

// MaxKeys bounds the refusal table; MaxQueue the lines waiting to be
// written.
const (
	MaxKeys  = 1024
	MaxQueue = 256
)

// Refusal is one refused event.
type Refusal struct {
	What Kind `json:"what"`
	// Key is the path, host[:port] or syscall; PID and Comm the process
	// that asked, where known.
	Path    string `json:"path,omitempty"`
	Host    string `json:"host,omitempty"`
	Syscall string `json:"syscall,omitempty"`
	PID     int    `json:"pid,omitempty"`
	Comm    string `json:"comm,omitempty"`
	Count   int64  `json:"count"`
}

// key is a refusal's key in the table: a struct, so that a repeat
// allocates nothing (a peer may repeat a refusal a million times).
type key struct {
	what                Kind
	path, host, syscall string
}

func (r Refusal) key() key { return key{r.What, r.Path, r.Host, r.Syscall} }

// label is the key as a person reads it.
func (r Refusal) label() string { return r.Path + r.Host + r.Syscall }

type entry struct {
	r       Refusal
	emitted int64 // the count the stream last showed
	first   int64 // the count of the first refusal of the key
}

// Recorder keeps a session's refusals and writes its stream (when it has
// one). The zero of a *Recorder (nil) records nothing; every method is
// safe on it and from any goroutine.
type Recorder struct {
	mu      sync.Mutex
	out     *writer // nil: no stream, counts only
	t0      time.Time
	table   map[key]*entry
	order   []*entry       // first-seen order
	counts  map[Kind]int64 // every refusal, in the table or not
	untold  map[Kind]int64 // refusals of keys beyond the table
	started bool
	ended   bool
}

// New returns a recorder whose t counts from now, writing to out (nil:
// no stream; the counts still make the summary).
func New(out *Sink) *Recorder {
	r := &Recorder{t0: time.Now(), table: map[key]*entry{}, counts: map[Kind]int64{}, untold: map[Kind]int64{}}
	if out != nil {
		r.out = newWriter(out)
	}
	return r
}

// Streams reports whether r writes a stream (not only counts).
func (r *Recorder) Streams() bool { return r != nil && r.out != nil }

// event is one line: "event" and "t" first, then the content's fields.
func (r *Recorder) event(name string, content any) {
	if r.out == nil {
		return
	}
	r.out.put(Line(name, time.Since(r.t0), content))
}

// Line encodes one event as a JSON line.
func Line(name string, t time.Duration, content any) []byte {
	body, err := json.Marshal(content)
	if err != nil || len(body) < 2 || body[0] != '{' {
		body = []byte("{}")
	}
	head := fmt.Sprintf(`{"event":%q,"t":%.6f`, name, t.Seconds())
	if len(body) > 2 {
		head += ","
	}
	b := make([]byte, 0, len(head)+len(body)+1)
	b = append(b, head...)
	b = append(b, body[1:]...)
	return append(b, '\n')
}

// Start writes the start event (once).
func (r *Recorder) Start(s Start) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started || r.ended {
		return
	}
	r.started = true
	if s.Observes == nil {
		s.Observes = []Kind{}
	}
	if s.Cannot == nil {
		s.Cannot = map[Kind]string{}
	}
	s.Policy.fill()
	r.event("start", s)
	// Refusals that came before start (it waits for the peer's pid) are
	// written after it as they would have been: the first of each key
	// with its own count, the total before end.
	for _, en := range r.order {
		if en.emitted == 0 {
			first := en.r
			first.Count, en.emitted = en.first, en.first
			r.event("refused", first)
		}
	}
}

func (p *Policy) fill() {
	for _, l := range []*[]string{&p.Writable, &p.ReadOnly, &p.Hidden, &p.Allow} {
		if *l == nil {
			*l = []string{}
		}
	}
}

// Refused records one refusal (Count 0 counts as 1): the first of its key
// is written at once, repeats are counted, and keys beyond MaxKeys are
// counted by kind only.
func (r *Recorder) Refused(f Refusal) {
	if r == nil {
		return
	}
	n := max(f.Count, 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	r.counts[f.What] += n
	k := f.key()
	e, ok := r.table[k]
	switch {
	case ok:
		e.r.Count += n
		return
	case len(r.table) >= MaxKeys:
		r.untold[f.What] += n
		return
	}
	f.Count = n
	e = &entry{r: f, first: n}
	r.table[k] = e
	r.order = append(r.order, e)
	if r.started {
		e.emitted = n
		r.event("refused", f)
	}
}

// Counts returns the refusals so far by kind.
func (r *Recorder) Counts() map[Kind]int64 {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[Kind]int64, len(r.counts))
	for k, v := range r.counts {
		out[k] = v
	}
	return out
}

// endLine is the end event with the counts.
type endLine struct {
	End
	Refusals map[Kind]int64 `json:"refusals"`
	// Untold are refusals whose keys did not fit the table, by kind.
	Untold  map[Kind]int64 `json:"untold"`
	Dropped int64          `json:"dropped"`
}

// End writes the repeat counts (a refused event with the total for every
// key seen again), then the end event, and closes the stream: it waits
// at most wait for a slow reader, and syncs a file. Nothing is recorded
// after it.
func (r *Recorder) End(e End, wait time.Duration) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return
	}
	r.ended = true
	for _, en := range r.order {
		if en.r.Count != en.emitted {
			en.emitted = en.r.Count
			r.event("refused", en.r)
		}
	}
	line := endLine{End: e, Refusals: map[Kind]int64{}, Untold: map[Kind]int64{}}
	for k, v := range r.counts {
		line.Refusals[k] = v
	}
	for k, v := range r.untold {
		line.Untold[k] = v
	}
	r.mu.Unlock()
	if r.out == nil {
		return
	}
	line.Dropped = r.out.dropped()
	r.out.last(Line("end", time.Since(r.t0), line))
	r.out.close(wait)
}

// Summary is the line for people at the end of a session with refusals
// ("" without): the kinds by count, each with its three most frequent
// keys. Limits are left out: the session prints its own line for them.
func (r *Recorder) Summary() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for _, k := range Kinds {
		n := r.counts[k]
		if n == 0 || k == Pids || k == Memory {
			continue // a limit has its own line already
		}
		var top []*entry
		for _, e := range r.order {
			if e.r.What == k && e.r.label() != "" {
				top = append(top, e)
			}
		}
		sort.SliceStable(top, func(i, j int) bool { return top[i].r.Count > top[j].r.Count })
		var names []string
		for i, e := range top {
			if i == 3 {
				names = append(names, "...")
				break
			}
			if e.r.Count > 1 {
				names = append(names, fmt.Sprintf("%s (%d)", e.r.label(), e.r.Count))
			} else {
				names = append(names, e.r.label())
			}
		}
		p := fmt.Sprintf("%d %s", n, noun(k, n))
		if len(names) > 0 {
			p += ": " + strings.Join(names, ", ")
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return "refused: " + strings.Join(parts, "; ")
}

// noun names n refusals of kind k.
func noun(k Kind, n int64) string {
	w := map[Kind][2]string{
		Egress: {"egress request", "egress requests"},
		Pids:   {"fork at the pids limit", "forks at the pids limit"},
		Memory: {"OOM kill at the memory limit", "OOM kills at the memory limit"},
	}[k]
	if w[0] == "" {
		w = [2]string{string(k), string(k) + "s"}
	}
	if n == 1 {
		return w[0]
	}
	return w[1]
}
