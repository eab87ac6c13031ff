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
		if k == "" || strings.ContainsAny(k, "=\x00") {
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

// Encode returns the complete prelude: header and body.
func Encode(s Spec) ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("launch: encode: %w", err)
	}
	if s.Env == nil {
		s.Env = map[string]string{}
	}
	body, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("launch: encode: %w", err)
	}
	if len(body) > MaxSize {
		return nil, fmt.Errorf("launch: encode: %d bytes: %w", len(body), ErrSize)
	}
	out := make([]byte, HeaderSize, HeaderSize+len(body))
	binary.BigEndian.PutUint32(out, uint32(len(body)))
	return append(out, body...), nil
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
	var raw struct {
		Argv *[]*string         `json:"argv"`
		Cwd  *string            `json:"cwd"`
		Env  map[string]*string `json:"env"`
	}
	// Invalid UTF-8 is a syntax error, as for the reference's decoder;
	// encoding/json would otherwise replace it silently with U+FFFD.
	if !utf8.Valid(body) || !json.Valid(body) {
		return Spec{}, ErrSyntax
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Spec{}, ErrType
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return Spec{}, ErrType
	}
	if raw.Argv == nil || raw.Cwd == nil || raw.Env == nil {
		return Spec{}, ErrType
	}
	s := Spec{Argv: make([]string, 0, len(*raw.Argv)), Cwd: *raw.Cwd, Env: make(map[string]string, len(raw.Env))}
	for _, a := range *raw.Argv {
		if a == nil {
			return Spec{}, ErrType
		}
		s.Argv = append(s.Argv, *a)
	}
	for k, v := range raw.Env {
		if v == nil {
			return Spec{}, ErrType
		}
		s.Env[k] = *v
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}
