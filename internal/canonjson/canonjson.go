package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Valuer is implemented by types that know their JSON form as a generic
// value (maps, slices, strings, numbers). It is consulted before
// encoding/json, so such a type keeps raw file-name bytes and NaN intact.
type Valuer interface {
	JSONValue() any
}

// ErrUnsupported is returned for a value Python's json.dumps could not
// produce either (a non-string map key, a channel, a malformed json.Number).
var ErrUnsupported = errors.New("canonjson: unsupported value")

// maxDepth bounds recursion so that a cyclic or hostile value fails instead
// of exhausting the stack (Python raises RecursionError at a similar depth).
const maxDepth = 1000

// Marshal returns the compact canonical form: Python's
// json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True).
func Marshal(v any) ([]byte, error) {
	e := encoder{}
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

// MarshalIndent returns Python's json.dumps(v, sort_keys=True, indent=2,
// ensure_ascii=True): items end with "," at line ends, keys are followed by
// ": ", and empty containers stay "[]" and "{}". No trailing newline.
func MarshalIndent(v any) ([]byte, error) {
	e := encoder{indent: true}
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

// String returns s as a quoted canonical JSON string.
func String(s string) []byte { return AppendString(nil, s) }

type encoder struct {
	buf    []byte
	indent bool
}

func (e *encoder) newline(depth int) {
	if !e.indent {
		return
	}
	e.buf = append(e.buf, '\n')
	for i := 0; i < depth; i++ {
		e.buf = append(e.buf, ' ', ' ')
	}
}

func (e *encoder) keySep() {
	if e.indent {
		e.buf = append(e.buf, ':', ' ')
		return
	}
	e.buf = append(e.buf, ':')
}

func (e *encoder) value(v any, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: nesting deeper than %d", ErrUnsupported, maxDepth)
	}
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case string:
		e.buf = AppendString(e.buf, x)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case json.Number:
		return e.number(x)
	case float64:
		e.buf = AppendFloat(e.buf, x)
	case int:
		e.buf = strconv.AppendInt(e.buf, int64(x), 10)
	case int64:
		e.buf = strconv.AppendInt(e.buf, x, 10)
	case uint64:
		e.buf = strconv.AppendUint(e.buf, x, 10)
	case map[string]any:
		return encodeMap(e, x, depth)
	case map[string]string:
		return encodeMap(e, x, depth)
	case []any:
		return encodeSlice(e, x, depth)
	case []string:
		return encodeSlice(e, x, depth)
	case []int:
		return encodeSlice(e, x, depth)
	case Valuer:
		return e.value(x.JSONValue(), depth+1)
	case json.RawMessage, json.Marshaler:
		return e.viaStdlib(x, depth)
	default:
		return e.reflected(reflect.ValueOf(v), depth)
	}
	return nil
}

// encodeMap writes a map with string keys as an object in key order; a
// nil map is null.
func encodeMap[V any](e *encoder, m map[string]V, depth int) error {
	if m == nil {
		return e.null()
	}
	return e.object(sortedKeys(m), func(k string) any { return m[k] }, depth)
}

// encodeSlice writes a slice as an array; a nil slice is null.
func encodeSlice[V any](e *encoder, s []V, depth int) error {
	if s == nil {
		return e.null()
	}
	return e.array(len(s), func(i int) any { return s[i] }, depth)
}

// null writes JSON null; nil maps and slices are null, as in encoding/json.
func (e *encoder) null() error {
	e.buf = append(e.buf, "null"...)
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, Compare)
	return keys
}

func (e *encoder) object(keys []string, get func(string) any, depth int) error {
	if len(keys) == 0 {
		e.buf = append(e.buf, '{', '}')
		return nil
	}
	e.buf = append(e.buf, '{')
	for i, k := range keys {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.newline(depth + 1)
		e.buf = AppendString(e.buf, k)
		e.keySep()
		if err := e.value(get(k), depth+1); err != nil {
			return err
		}
	}
	e.newline(depth)
	e.buf = append(e.buf, '}')
	return nil
}

func (e *encoder) array(n int, get func(int) any, depth int) error {
	if n == 0 {
		e.buf = append(e.buf, '[', ']')
		return nil
	}
	e.buf = append(e.buf, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.newline(depth + 1)
		if err := e.value(get(i), depth+1); err != nil {
			return err
		}
	}
	e.newline(depth)
	e.buf = append(e.buf, ']')
	return nil
}

// reflected handles the remaining kinds: other integer and float widths,
// pointers, string-keyed maps and slices of any element type. Structs go
// through encoding/json so that their tags keep their usual meaning.
func (e *encoder) reflected(rv reflect.Value, depth int) error {
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.buf = strconv.AppendInt(e.buf, rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		e.buf = strconv.AppendUint(e.buf, rv.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		e.buf = AppendFloat(e.buf, rv.Float())
	case reflect.String:
		e.buf = AppendString(e.buf, rv.String())
	case reflect.Bool:
		e.buf = strconv.AppendBool(e.buf, rv.Bool())
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return e.null()
		}
		return e.value(rv.Elem().Interface(), depth+1)
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return fmt.Errorf("%w: map key type %s", ErrUnsupported, rv.Type().Key())
		}
		if rv.IsNil() {
			return e.null()
		}
		keys := make([]string, 0, rv.Len())
		vals := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			k := it.Key().String()
			keys = append(keys, k)
			vals[k] = it.Value().Interface()
		}
		slices.SortFunc(keys, Compare)
		return e.object(keys, func(k string) any { return vals[k] }, depth)
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 {
			return fmt.Errorf("%w: byte slice (Python has no JSON form for bytes)", ErrUnsupported)
		}
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return e.null()
		}
		return e.array(rv.Len(), func(i int) any { return rv.Index(i).Interface() }, depth)
	case reflect.Struct:
		return e.viaStdlib(rv.Interface(), depth)
	default:
		return fmt.Errorf("%w: %s", ErrUnsupported, rv.Type())
	}
	return nil
}

// viaStdlib lets encoding/json apply struct tags and Marshal methods, then
// re-encodes the generic result canonically.
func (e *encoder) viaStdlib(v any, depth int) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return e.value(generic, depth+1)
}

// number renders a JSON number literal the way Python renders the value
// json.loads makes of it: an int when the literal has no fraction or
// exponent (so "-0" becomes 0), a float otherwise.
func (e *encoder) number(n json.Number) error {
	s := string(n)
	isFloat, ok := numberGrammar(s)
	if !ok {
		return fmt.Errorf("%w: malformed number %q", ErrUnsupported, s)
	}
	if !isFloat {
		if s == "-0" {
			s = "0"
		}
		e.buf = append(e.buf, s...)
		return nil
	}
	// ParseFloat rounds correctly and yields ±Inf on overflow, exactly as
	// Python's float() does for these literals.
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("%w: number %q: %v", ErrUnsupported, s, err)
	}
	e.buf = AppendFloat(e.buf, f)
	return nil
}

// numberGrammar checks s against JSON's number grammar and reports whether
// it has a fraction or an exponent.
func numberGrammar(s string) (isFloat, ok bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = skipDigits(s, i)
	default:
		return false, false
	}
	if i < len(s) && s[i] == '.' {
		isFloat = true
		if i, ok = oneOrMoreDigits(s, i+1); !ok {
			return false, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		isFloat = true
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i, ok = oneOrMoreDigits(s, i); !ok {
			return false, false
		}
	}
	return isFloat, i == len(s)
}

// skipDigits returns the index of the first non-digit of s at or after i.
func skipDigits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// oneOrMoreDigits is skipDigits that also reports whether it skipped any.
func oneOrMoreDigits(s string, i int) (int, bool) {
	j := skipDigits(s, i)
	return j, j > i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// AppendFloat appends Python's repr of f: the shortest digits that round
// trip, in positional form when the decimal exponent is in [-4, 16), in
// d.ddde±XX form otherwise, always with a ".0" or an exponent so that the
// value reads back as a float.
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	// 'e' with precision -1 gives the shortest round-trip digits as
	// "-d.dddde±XX"; split it into sign, digits and the decimal point
	// position, then lay them out as CPython's float_repr_style "short".
	sci := strconv.FormatFloat(f, 'e', -1, 64)
	neg := sci[0] == '-'
	if neg {
		sci = sci[1:]
		dst = append(dst, '-')
	}
	mant, expPart, _ := cutByte(sci, 'e')
	exp, _ := strconv.Atoi(expPart)
	digits := make([]byte, 0, len(mant))
	for i := 0; i < len(mant); i++ {
		if mant[i] != '.' {
			digits = append(digits, mant[i])
		}
	}
	decpt := exp + 1 // digits are d1.d2d3... × 10^exp
	if decpt > -4 && decpt <= 16 {
		return appendPositional(dst, digits, decpt)
	}
	dst = append(dst, digits[0])
	if len(digits) > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'e')
	e := decpt - 1
	if e < 0 {
		dst = append(dst, '-')
		e = -e
	} else {
		dst = append(dst, '+')
	}
	if e < 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, int64(e), 10)
}

func appendPositional(dst, digits []byte, decpt int) []byte {
	switch {
	case decpt <= 0:
		dst = append(dst, '0', '.')
		for i := 0; i < -decpt; i++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	case decpt >= len(digits):
		dst = append(dst, digits...)
		for i := len(digits); i < decpt; i++ {
			dst = append(dst, '0')
		}
		return append(dst, '.', '0')
	default:
		dst = append(dst, digits[:decpt]...)
		dst = append(dst, '.')
		return append(dst, digits[decpt:]...)
	}
}

func cutByte(s string, c byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

const hexDigits = "0123456789abcdef"

// AppendString appends s quoted, with Python's ensure_ascii escaping and
// surrogateescape for bytes that are not valid UTF-8.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = appendASCII(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = appendU(dst, 0xdc00|rune(c))
		} else if r > 0xffff {
			r -= 0x10000
			dst = appendU(dst, 0xd800+(r>>10))
			dst = appendU(dst, 0xdc00+(r&0x3ff))
		} else {
			dst = appendU(dst, r)
		}
		i += size
	}
	return append(dst, '"')
}

// shortEscape holds the letter of each two-character escape, 0 for the
// bytes that have none.
var shortEscape = [256]byte{'"': '"', '\\': '\\', '\n': 'n', '\r': 'r', '\t': 't', '\b': 'b', '\f': 'f'}

func appendASCII(dst []byte, c byte) []byte {
	if esc := shortEscape[c]; esc != 0 {
		return append(dst, '\\', esc)
	}
	if c < 0x20 || c == 0x7f {
		return appendU(dst, rune(c))
	}
	return append(dst, c)
}

func appendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u',
		hexDigits[(r>>12)&0xf], hexDigits[(r>>8)&0xf],
		hexDigits[(r>>4)&0xf], hexDigits[r&0xf])
}

// codePoint decodes the character at s[i:] as Python sees it after
// surrogateescape decoding: a valid UTF-8 sequence is its code point, any
// other byte b is the lone surrogate U+DC00+b.
func codePoint(s string, i int) (rune, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		return rune(c), 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 {
		return 0xdc00 | rune(c), 1
	}
	return r, size
}

// Compare orders a and b as Python orders the str values they decode to
// with surrogateescape: code point by code point. It differs from a byte
// comparison only when a string holds bytes that are not valid UTF-8.
func Compare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i] == b[j] && a[i] < utf8.RuneSelf {
			i++
			j++
			continue
		}
		ra, na := codePoint(a, i)
		rb, nb := codePoint(b, j)
		if ra != rb {
			if ra < rb {
				return -1
			}
			return 1
		}
		i += na
		j += nb
	}
	switch {
	case i < len(a):
		return 1
	case j < len(b):
		return -1
	}
	return 0
}
