package canonjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

var (
	// ErrSyntax: the input is not a document Python's json.loads accepts.
	ErrSyntax = errors.New("canonjson: malformed JSON")
	// ErrLoneSurrogate: a \uXXXX escape names half a surrogate pair.
	// Python keeps such a string, but a Go string cannot hold it apart from
	// a surrogate-escaped byte, so hashing it would be ambiguous: refused.
	ErrLoneSurrogate = errors.New("canonjson: lone UTF-16 surrogate escape")
)

// Decode parses data as Python's json.loads does after a strict UTF-8
// decode, into values Marshal re-encodes as json.dumps would: objects are
// map[string]any (the last duplicate key wins), arrays []any, numbers
// json.Number (as written), NaN, Infinity and -Infinity float64, and
// strings, bools and nil. Input that is not valid UTF-8, has trailing data,
// or nests deeper than Marshal accepts is an error.
func Decode(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: not valid UTF-8", ErrSyntax)
	}
	d := decoder{data: data}
	d.space()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.pos != len(d.data) {
		return nil, d.fail("extra data")
	}
	return v, nil
}

type decoder struct {
	data []byte
	pos  int
}

func (d *decoder) fail(what string) error {
	return fmt.Errorf("%w: %s at byte %d", ErrSyntax, what, d.pos)
}

func (d *decoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) literal(word string) bool {
	if len(d.data)-d.pos >= len(word) && string(d.data[d.pos:d.pos+len(word)]) == word {
		d.pos += len(word)
		return true
	}
	return false
}

func (d *decoder) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, d.fail("nesting too deep")
	}
	if d.pos >= len(d.data) {
		return nil, d.fail("unexpected end")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.str()
	case d.literal("null"):
		return nil, nil
	case d.literal("true"):
		return true, nil
	case d.literal("false"):
		return false, nil
	case d.literal("NaN"):
		return math.NaN(), nil
	case d.literal("Infinity"):
		return math.Inf(1), nil
	case d.literal("-Infinity"):
		return math.Inf(-1), nil
	case c == '-' || isDigit(c):
		return d.number()
	}
	return nil, d.fail("unexpected character")
}

func (d *decoder) object(depth int) (any, error) {
	d.pos++ // {
	m := map[string]any{}
	err := d.members('}', func() error {
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return d.fail("expected a string key")
		}
		k, err := d.str()
		if err != nil {
			return err
		}
		d.space()
		if !d.accept(':') {
			return d.fail("expected ':'")
		}
		d.space()
		v, err := d.value(depth + 1)
		if err != nil {
			return err
		}
		m[k] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (d *decoder) array(depth int) (any, error) {
	d.pos++ // [
	a := []any{}
	err := d.members(']', func() error {
		v, err := d.value(depth + 1)
		if err != nil {
			return err
		}
		a = append(a, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// members reads what follows an object's or an array's opening byte up to
// and including close: none, or one or more comma-separated members, each
// read by one with the blanks around it skipped.
func (d *decoder) members(close byte, one func() error) error {
	d.space()
	if d.accept(close) {
		return nil
	}
	for {
		d.space()
		if err := one(); err != nil {
			return err
		}
		d.space()
		if d.accept(',') {
			continue
		}
		if d.accept(close) {
			return nil
		}
		return d.fail("expected ',' or '" + string(close) + "'")
	}
}

// accept steps over c when it is the next byte.
func (d *decoder) accept(c byte) bool {
	if d.pos < len(d.data) && d.data[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

func (d *decoder) number() (any, error) {
	start := d.pos
	if d.data[d.pos] == '-' {
		d.pos++
	}
	digits := func() int {
		s := d.pos
		for d.pos < len(d.data) && isDigit(d.data[d.pos]) {
			d.pos++
		}
		return d.pos - s
	}
	switch {
	case d.pos < len(d.data) && d.data[d.pos] == '0':
		d.pos++
	case digits() == 0:
		return nil, d.fail("malformed number")
	}
	// Like Python's scanner, a '.' or 'e' not followed by digits ends the
	// number there (and the leftover is then a syntax error).
	if d.pos+1 < len(d.data) && d.data[d.pos] == '.' && isDigit(d.data[d.pos+1]) {
		d.pos++
		digits()
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		save := d.pos
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if digits() == 0 {
			d.pos = save
		}
	}
	return json.Number(d.data[start:d.pos]), nil
}

func (d *decoder) str() (string, error) {
	d.pos++ // opening quote
	var out []byte
	for {
		if d.pos >= len(d.data) {
			return "", d.fail("unterminated string")
		}
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return string(out), nil
		case c < 0x20:
			return "", d.fail("control character in string")
		case c == '\\':
			var err error
			if out, err = d.escape(out); err != nil {
				return "", err
			}
		default:
			out = append(out, c)
			d.pos++
		}
	}
}

var simpleEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func (d *decoder) escape(out []byte) ([]byte, error) {
	if d.pos+1 >= len(d.data) {
		return nil, d.fail("unterminated escape")
	}
	e := d.data[d.pos+1]
	if r, ok := simpleEscapes[e]; ok {
		d.pos += 2
		return append(out, r), nil
	}
	if e != 'u' {
		return nil, d.fail("invalid escape")
	}
	r, err := d.hex4(d.pos + 2)
	if err != nil {
		return nil, err
	}
	d.pos += 6
	if utf16.IsSurrogate(r) {
		if r >= 0xdc00 || d.pos+1 >= len(d.data) || d.data[d.pos] != '\\' || d.data[d.pos+1] != 'u' {
			return nil, fmt.Errorf("%w at byte %d", ErrLoneSurrogate, d.pos)
		}
		lo, err := d.hex4(d.pos + 2)
		if err != nil {
			return nil, err
		}
		if lo < 0xdc00 || lo > 0xdfff {
			return nil, fmt.Errorf("%w at byte %d", ErrLoneSurrogate, d.pos)
		}
		d.pos += 6
		r = utf16.DecodeRune(r, lo)
	}
	return utf8.AppendRune(out, r), nil
}

func (d *decoder) hex4(at int) (rune, error) {
	if at+4 > len(d.data) {
		return 0, d.fail("short \\u escape")
	}
	v, err := strconv.ParseUint(string(d.data[at:at+4]), 16, 32)
	if err != nil {
		return 0, d.fail("invalid \\u escape")
	}
	return rune(v), nil
}
