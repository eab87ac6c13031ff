package launch

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Winsize is a terminal's size in character cells.
type Winsize struct {
	Rows uint16 `json:"rows"`
	Cols uint16 `json:"cols"`
}

// WinsizeFile is the control-dir file through which the host resizes the
// peer's terminal after the start: "ROWS COLS\n" in decimal, replaced
// atomically (write a temp file, rename it over this name) like the lease.
// The init reads it when it is renamed into place and applies it to the
// pty, whose kernel then sends SIGWINCH to the foreground process group.
const WinsizeFile = "winsize"

// maxWinsizeFile bounds a winsize file: two 5-digit numbers, a space and
// a newline.
const maxWinsizeFile = 12

// AppendWinsize returns the winsize file's content for w.
func AppendWinsize(dst []byte, w Winsize) []byte {
	dst = strconv.AppendUint(dst, uint64(w.Rows), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, uint64(w.Cols), 10)
	return append(dst, '\n')
}

// ParseWinsize decodes a winsize file's content; anything but "ROWS
// COLS\n" with both numbers in 0..65535 is refused (ok false), so a torn
// or foreign file never reaches the terminal.
func ParseWinsize(b []byte) (w Winsize, ok bool) {
	if len(b) > maxWinsizeFile || len(b) < 4 || b[len(b)-1] != '\n' {
		return w, false
	}
	rows, cols, found := bytes.Cut(b[:len(b)-1], []byte{' '})
	r, ok1 := cells(rows)
	c, ok2 := cells(cols)
	if !found || !ok1 || !ok2 {
		return w, false
	}
	return Winsize{Rows: r, Cols: c}, true
}

func cells(b []byte) (uint16, bool) {
	if len(b) == 0 || len(b) > 5 || (len(b) > 1 && b[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b), 10, 16)
	return uint16(n), err == nil
}

// parseTTY decodes the optional "tty" key: absent or null is no terminal;
// otherwise an object whose "rows" and "cols" are integers in 0..65535.
func parseTTY(raw json.RawMessage, present bool) (*Winsize, error) {
	if !present || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return nil, ErrType
	}
	var w Winsize
	for name, dst := range map[string]*uint16{"rows": &w.Rows, "cols": &w.Cols} {
		v, ok := obj[name]
		if !ok {
			return nil, ErrType
		}
		n, ok := cells(bytes.TrimSpace(v))
		if !ok {
			return nil, ErrType
		}
		*dst = n
	}
	return &w, nil
}

// appendTTY writes ,"tty":{...} when the spec asks for a terminal.
func (s Spec) appendTTY(dst []byte) []byte {
	if s.TTY == nil {
		return dst
	}
	dst = append(dst, `,"tty":{"rows":`...)
	dst = strconv.AppendUint(dst, uint64(s.TTY.Rows), 10)
	dst = append(dst, `,"cols":`...)
	dst = strconv.AppendUint(dst, uint64(s.TTY.Cols), 10)
	return append(dst, '}')
}
