package stage

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/loki-sh/loki/internal/session/confine"
)

// The Policy and Late travel between the supervisor and the stage of the
// same build in a text form of their own, not JSON: encoding/json's first
// use in a process builds its reflection caches, which cost the stage
// (on the session's critical path) and the supervisor more than the rest
// of the decoding (docs/session.md). One line each: a version line, then
// "key" or "key VALUE" (strings Go-quoted, numbers decimal; a list is its
// key repeated), then "end", so that a document cut short never parses.
//
// A stage refuses a document of another version, an unknown key, a key
// given twice, or anything after "end": a loki-init of another build
// fails closed instead of running with a part of the policy.
// wireVersion changes whenever a key changes meaning; a key added or
// removed is refused by the other build in any case.
const wireVersion = "1"

const (
	policyHeader = "loki-stage-policy " + wireVersion
	lateHeader   = "loki-stage-late " + wireVersion
	wireEnd      = "end"
)

// ErrWire is a policy the stage cannot take as this build's.
var ErrWire = errors.New("not this loki-init's policy format")

// FormatHint says what to do about a document from another build.
const FormatHint = "loki-supervise and its --init must come from the same build"

// PolicyRefused starts the stage's report of a policy it cannot read
// (on the status pipe), in this build and the ones before it.
const PolicyRefused = "arguments: confinement policy: "

type wireWriter struct{ b []byte }

func (w *wireWriter) flag(key string, on bool) {
	if on {
		w.b = append(w.b, key...)
		w.b = append(w.b, '\n')
	}
}

func (w *wireWriter) str(key, v string) {
	if v != "" {
		w.strs(key, []string{v})
	}
}

func (w *wireWriter) strs(key string, vs []string) {
	for _, v := range vs {
		w.b = append(w.b, key...)
		w.b = append(w.b, ' ')
		w.b = strconv.AppendQuote(w.b, v)
		w.b = append(w.b, '\n')
	}
}

func (w *wireWriter) pair(key string, a, b int64) {
	w.b = append(w.b, key...)
	w.b = append(w.b, ' ')
	w.b = strconv.AppendInt(w.b, a, 10)
	w.b = append(w.b, ' ')
	w.b = strconv.AppendInt(w.b, b, 10)
	w.b = append(w.b, '\n')
}

func (w *wireWriter) num(key string, n int64) {
	if n != 0 {
		w.b = append(w.b, key...)
		w.b = append(w.b, ' ')
		w.b = strconv.AppendInt(w.b, n, 10)
		w.b = append(w.b, '\n')
	}
}

// Encode returns p as the stage reads it from PolicyEnv (Late is not
// part of it: it travels on LateFD).
func (p Policy) Encode() string {
	w := wireWriter{b: make([]byte, 0, 512)}
	w.b = append(w.b, policyHeader+"\n"...)
	if u := p.User; u != nil {
		w.pair("user", int64(u.UID), int64(u.GID))
	}
	w.str("userns", string(p.UserNS))
	w.str("network", string(p.Network))
	w.str("fs", string(p.FS))
	w.strs("write", p.Write)
	w.strs("hide", p.Hide)
	w.strs("protect", p.Protect)
	r := p.Resources
	w.num("pids-max", r.PidsMax)
	w.num("memory-max", r.MemoryMax)
	if c := r.CPU; c != nil {
		w.b = append(w.b, "cpu "...)
		w.b = strconv.AppendInt(w.b, c.Quota, 10)
		w.b = append(w.b, ' ')
		w.b = strconv.AppendUint(w.b, c.Period, 10)
		w.b = append(w.b, '\n')
	}
	w.num("tmp-size", r.TmpSize)
	w.strs("socket", p.Sockets)
	w.strs("allow", p.Allow)
	w.strs("read", p.Read)
	w.flag("tty", p.TTY)
	w.flag("host-stdin", p.HostStdin)
	w.num("egress-fd", int64(p.EgressFD))
	w.num("notify-fd", int64(p.NotifyFD))
	w.flag("private-user", p.PrivateUser)
	for _, t := range p.IDMap {
		key := "idmap"
		if t.RO {
			key = "idmap-ro"
		}
		w.strs(key, []string{t.Path})
	}
	w.num("idmap-fd", int64(p.IDMapFD))
	w.num("late-fd", int64(p.LateFD))
	if c := p.Cgroup; c != nil {
		// Quoted even when empty: a cgroup without a name is the
		// stage's to refuse (Holds), not the format's to drop.
		w.b = append(w.b, "cgroup "...)
		w.b = strconv.AppendQuote(w.b, c.Name)
		w.b = append(w.b, '\n')
		w.strs("cgroup-v1", c.V1)
	}
	w.b = append(w.b, wireEnd+"\n"...)
	return string(w.b)
}

// Encode returns l as the stage reads it from LateFD.
func (l Late) Encode() []byte {
	w := wireWriter{b: make([]byte, 0, 256)}
	w.b = append(w.b, lateHeader+"\n"...)
	w.strs("mask", l.Mask)
	w.strs("other-root", l.OtherRoots)
	w.b = append(w.b, wireEnd+"\n"...)
	return w.b
}

// wireReader walks a document's lines after its header; each line is
// split into its key and the rest.
type wireReader struct {
	rest string
	seen map[string]bool
}

// open checks the header; a document from another build (JSON from one
// that predates this format, or another version) is ErrWire.
func openWire(doc, header string) (*wireReader, error) {
	first, rest, ok := strings.Cut(doc, "\n")
	if !ok || first != header {
		got := first
		switch {
		case strings.HasPrefix(doc, "{"):
			got = "JSON"
		case len(got) > 40 || strconv.Quote(got) != `"`+got+`"`:
			got = "something else"
		default:
			got = strconv.Quote(got)
		}
		return nil, fmt.Errorf("%w (%s, want %q): %s", ErrWire, got, header, FormatHint)
	}
	return &wireReader{rest: rest, seen: map[string]bool{}}, nil
}

// next returns the next line's key and value (hasVal: the key was
// followed by a space); done at "end", which must be the document's last
// line.
func (r *wireReader) next() (key, val string, hasVal, done bool, err error) {
	line, rest, ok := strings.Cut(r.rest, "\n")
	if !ok {
		return "", "", false, false, fmt.Errorf("%w: cut short", ErrWire)
	}
	r.rest = rest
	if line == wireEnd {
		if rest != "" {
			return "", "", false, false, fmt.Errorf("%w: data after its end", ErrWire)
		}
		return "", "", false, true, nil
	}
	key, val, hasVal = strings.Cut(line, " ")
	return key, val, hasVal, false, nil
}

// once refuses a key that may appear once and did before.
func (r *wireReader) once(key string) error {
	if r.seen[key] {
		return fmt.Errorf("%w: %s given twice", ErrWire, key)
	}
	r.seen[key] = true
	return nil
}

func wireStr(key, val string) (string, error) {
	if len(val) < 2 || val[0] != '"' {
		return "", fmt.Errorf("%w: %s: want a quoted string", ErrWire, key)
	}
	s, err := strconv.Unquote(val)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrWire, key, err)
	}
	return s, nil
}

// wireNum parses a decimal the way Encode writes it: no sign but '-', no
// leading zeros; 0 only where zero is given (else it is omitted).
func wireNum(key, val string, bits int, zero bool) (int64, error) {
	n, err := strconv.ParseInt(val, 10, bits)
	if err != nil || (n == 0 && !zero) || strconv.FormatInt(n, 10) != val {
		return 0, fmt.Errorf("%w: %s: want a number", ErrWire, key)
	}
	return n, nil
}

// wireUint parses an unsigned decimal written by Encode (0 allowed: an
// id or a period may be 0).
func wireUint(key, val string, bits int) (uint64, error) {
	n, err := strconv.ParseUint(val, 10, bits)
	if err != nil || strconv.FormatUint(n, 10) != val {
		return 0, fmt.Errorf("%w: %s: want a number", ErrWire, key)
	}
	return n, nil
}

// ParsePolicy is the inverse of Policy.Encode. Anything Encode cannot
// have written is refused (ErrWire).
func ParsePolicy(doc string) (Policy, error) {
	var p Policy
	r, err := openWire(doc, policyHeader)
	if err != nil {
		return p, err
	}
	for {
		key, val, hasVal, done, err := r.next()
		if err != nil {
			return Policy{}, err
		}
		if done {
			break
		}
		if err := p.set(r, key, val, hasVal); err != nil {
			return Policy{}, err
		}
	}
	return p, nil
}

// set applies one line to p.
func (p *Policy) set(r *wireReader, key, val string, hasVal bool) error {
	// Keys that may be given once.
	switch key {
	case "user", "userns", "network", "fs", "pids-max", "memory-max", "cpu", "tmp-size",
		"tty", "host-stdin", "egress-fd", "notify-fd", "private-user", "idmap-fd", "late-fd", "cgroup":
		if err := r.once(key); err != nil {
			return err
		}
	}
	// Keys without a value.
	switch key {
	case "tty", "host-stdin", "private-user":
		if hasVal {
			return fmt.Errorf("%w: %s takes no value", ErrWire, key)
		}
	}
	var err error
	var s string
	var n int64
	switch key {
	case "user":
		uid, gid, _ := strings.Cut(val, " ")
		var u, g uint64
		if u, err = wireUint(key, uid, 32); err == nil {
			g, err = wireUint(key, gid, 32)
		}
		p.User = &confine.User{UID: uint32(u), GID: uint32(g)}
	case "cpu":
		quota, period, _ := strings.Cut(val, " ")
		var q uint64
		c := &confine.CPUMax{}
		if c.Quota, err = wireNum(key, quota, 64, true); err == nil {
			q, err = wireUint(key, period, 64)
			c.Period = q
		}
		p.Resources.CPU = c
	case "userns", "network", "fs", "write", "hide", "protect", "socket", "allow", "read", "idmap", "idmap-ro", "cgroup", "cgroup-v1":
		if s, err = wireStr(key, val); err != nil {
			return err
		}
		switch key {
		case "userns":
			p.UserNS = confine.UserNS(s)
		case "network":
			p.Network = confine.Network(s)
		case "fs":
			p.FS = confine.FS(s)
		case "write":
			p.Write = append(p.Write, s)
		case "hide":
			p.Hide = append(p.Hide, s)
		case "protect":
			p.Protect = append(p.Protect, s)
		case "socket":
			p.Sockets = append(p.Sockets, s)
		case "allow":
			p.Allow = append(p.Allow, s)
		case "read":
			p.Read = append(p.Read, s)
		case "idmap", "idmap-ro":
			p.IDMap = append(p.IDMap, IDMapTree{Path: s, RO: key == "idmap-ro"})
		case "cgroup":
			p.Cgroup = &Cgroup{Name: s}
		case "cgroup-v1":
			if p.Cgroup == nil {
				return fmt.Errorf("%w: cgroup-v1 before cgroup", ErrWire)
			}
			p.Cgroup.V1 = append(p.Cgroup.V1, s)
		}
	case "pids-max", "memory-max", "tmp-size":
		if n, err = wireNum(key, val, 64, false); err != nil {
			return err
		}
		switch key {
		case "pids-max":
			p.Resources.PidsMax = n
		case "memory-max":
			p.Resources.MemoryMax = n
		case "tmp-size":
			p.Resources.TmpSize = n
		}
	case "egress-fd", "notify-fd", "idmap-fd", "late-fd":
		if n, err = wireNum(key, val, 32, false); err != nil {
			return err
		}
		switch key {
		case "egress-fd":
			p.EgressFD = int(n)
		case "notify-fd":
			p.NotifyFD = int(n)
		case "idmap-fd":
			p.IDMapFD = int(n)
		case "late-fd":
			p.LateFD = int(n)
		}
	case "tty":
		p.TTY = true
	case "host-stdin":
		p.HostStdin = true
	case "private-user":
		p.PrivateUser = true
	default:
		return fmt.Errorf("%w: unknown key %q: %s", ErrWire, key, FormatHint)
	}
	return err
}

// ParseLate is the inverse of Late.Encode.
func ParseLate(doc []byte) (Late, error) {
	var l Late
	r, err := openWire(string(doc), lateHeader)
	if err != nil {
		return l, err
	}
	for {
		key, val, _, done, err := r.next()
		if err != nil {
			return Late{}, err
		}
		if done {
			return l, nil
		}
		s, err := wireStr(key, val)
		switch {
		case key != "mask" && key != "other-root":
			return Late{}, fmt.Errorf("%w: unknown key %q: %s", ErrWire, key, FormatHint)
		case err != nil:
			return Late{}, err
		case key == "mask":
			l.Mask = append(l.Mask, s)
		default:
			l.OtherRoots = append(l.OtherRoots, s)
		}
	}
}
