package launch

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// HeaderSize is the length of the big-endian size prefix.
const HeaderSize = 4

// MaxSize is the largest accepted JSON body.
const MaxSize = 1 << 20

// Sentinel errors. Their text is a short class name, safe to print: it never
// contains launch data.
var (
	ErrSize          = errors.New("launch-size")
	ErrTruncated     = errors.New("launch-truncated")
	ErrSyntax        = errors.New("launch-syntax")
	ErrType          = errors.New("launch-type")
	ErrEmptyArgv     = errors.New("launch-empty-argv")
	ErrRelativeCwd   = errors.New("launch-relative-cwd")
	ErrNUL           = errors.New("launch-nul-byte")
	ErrEnvName       = errors.New("launch-env-name")
	ErrNotExecutable = errors.New("launch-not-executable")
)

// Spec is what the peer is started with.
type Spec struct {
	Argv []string          `json:"argv"`
	Cwd  string            `json:"cwd"`
	Env  map[string]string `json:"env"`
	// TTY, when set, asks the init to run the peer on a pseudo-terminal of
	// this initial size instead of pipes (prelude key "tty"; an init that
	// predates it ignores the key).
	TTY *Winsize `json:"tty,omitempty"`
}

// Validate checks everything that can be checked without the filesystem.
func (s Spec) Validate() error {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return ErrEmptyArgv
	}
	if !filepath.IsAbs(s.Cwd) {
		return ErrRelativeCwd
	}
	if strings.IndexByte(s.Cwd, 0) >= 0 {
		return ErrNUL
	}
	for _, a := range s.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return ErrNUL
		}
	}
	for k, v := range s.Env {
		// A name that is not UTF-8 (or holds U+FFFD) cannot cross the
		// prelude unchanged: refused rather than renamed.
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(k, utf8.RuneError) {
			return ErrEnvName
		}
		if strings.IndexByte(v, 0) >= 0 {
			return ErrNUL
		}
	}
	return nil
}

// Environ returns the env as a sorted KEY=VALUE list, so the peer's
// environment is reproducible.
func (s Spec) Environ() []string {
	out := make([]string, 0, len(s.Env))
	for k, v := range s.Env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Encode returns the complete prelude: header and body. Bytes that are not
// UTF-8 in argv, cwd or env values travel surrogate-escaped (see text.go).
func Encode(s Spec) ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("launch: encode: %w", err)
	}
	body := s.appendJSON(make([]byte, HeaderSize, HeaderSize+256))
	n := len(body) - HeaderSize
	if n > MaxSize {
		return nil, fmt.Errorf("launch: encode: %d bytes: %w", n, ErrSize)
	}
	binary.BigEndian.PutUint32(body, uint32(n))
	return body, nil
}

// appendJSON writes {"argv":[...],"cwd":...,"env":{...}}, env sorted.
func (s Spec) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"argv":[`...)
	for i, a := range s.Argv {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, a)
	}
	dst = append(dst, `],"cwd":`...)
	dst = appendString(dst, s.Cwd)
	dst = append(dst, `,"env":{`...)
	names := make([]string, 0, len(s.Env))
	for k := range s.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for i, k := range names {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendString(dst, s.Env[k])
	}
	dst = append(dst, '}')
	dst = s.appendTTY(dst)
	return append(dst, '}')
}

// ParseLength decodes the header and enforces 0 < N <= MaxSize.
func ParseLength(header [HeaderSize]byte) (int, error) {
	n := binary.BigEndian.Uint32(header[:])
	if n == 0 || n > MaxSize {
		return 0, ErrSize
	}
	return int(n), nil
}

// Parse decodes and validates a body. Every key must be present with the
// right type; a null env is refused rather than meaning "inherit", and a
// null inside argv or env is refused rather than read as "".
func Parse(body []byte) (Spec, error) {
	// Invalid UTF-8 is a syntax error, as for the reference's decoder;
	// encoding/json would otherwise replace it silently with U+FFFD.
	if !utf8.Valid(body) || !json.Valid(body) {
		return Spec{}, ErrSyntax
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Spec{}, ErrType
	}
	// The keys are matched exactly, as the reference does: decoding into a
	// struct would also take "ARGV" or "Env" for them. Of a key given
	// twice the last counts, as in the reference.
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return Spec{}, ErrType
	}
	var argv []json.RawMessage
	var env map[string]json.RawMessage
	cwd, ok := obj["cwd"]
	if !ok || json.Unmarshal(obj["argv"], &argv) != nil || argv == nil ||
		json.Unmarshal(obj["env"], &env) != nil || env == nil {
		return Spec{}, ErrType
	}
	s, err := raw2spec(argv, cwd, env)
	if err != nil {
		return Spec{}, err
	}
	tty, present := obj["tty"]
	if s.TTY, err = parseTTY(tty, present); err != nil {
		return Spec{}, err
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// raw2spec decodes every string itself, so surrogate-escaped bytes come
// back exact. Env names are decoded by encoding/json, which turns a lone
// surrogate into U+FFFD: such a name is refused rather than renamed.
func raw2spec(argv []json.RawMessage, cwd json.RawMessage, env map[string]json.RawMessage) (Spec, error) {
	s := Spec{Argv: make([]string, 0, len(argv)), Env: make(map[string]string, len(env))}
	var err error
	if s.Cwd, err = unquote(cwd); err != nil {
		return Spec{}, err
	}
	for _, a := range argv {
		v, err := unquote(a)
		if err != nil {
			return Spec{}, err
		}
		s.Argv = append(s.Argv, v)
	}
	for k, a := range env {
		v, err := unquote(a)
		if err != nil {
			return Spec{}, err
		}
		s.Env[k] = v
	}
	return s, nil
}
