package launch

import (
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The prelude is JSON, which cannot hold bytes that are not UTF-8, yet
// argv, cwd and env values on Unix are bytes. Like the reference (Python's
// surrogateescape), a byte 0x80-0xff that is not part of valid UTF-8 travels
// as the lone surrogate escape \udc80-\udcff and comes out as that byte
// again, so such arguments pass exactly instead of being replaced by U+FFFD.
// Any other lone surrogate has no byte meaning and is refused.

// appendString appends s as a JSON string: valid UTF-8 as is, other bytes
// as \udcXX.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = appendEscape(dst, 0xdc00|rune(c))
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = appendEscape(dst, rune(c))
		default:
			dst = append(dst, c)
		}
		i++
	}
	return append(dst, '"')
}

func appendEscape(dst []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// unquote decodes one JSON string literal from a document that already
// passed json.Valid and utf8.Valid. A value that is not a string (null,
// a number) is ErrType; a lone surrogate outside \udc80-\udcff is ErrSyntax.
func unquote(raw json.RawMessage) (string, error) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", ErrType
	}
	body := raw[1 : len(raw)-1]
	if !strings.ContainsRune(string(body), '\\') {
		return string(body), nil
	}
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); {
		if body[i] != '\\' {
			b.WriteByte(body[i])
			i++
			continue
		}
		if body[i+1] != 'u' {
			b.WriteByte(simpleEscape(body[i+1]))
			i += 2
			continue
		}
		r := hex4(body[i+2 : i+6])
		i += 6
		if !utf16.IsSurrogate(r) {
			b.WriteRune(r)
			continue
		}
		if r < 0xdc00 && i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
			if lo := hex4(body[i+2 : i+6]); lo >= 0xdc00 && lo <= 0xdfff {
				b.WriteRune(utf16.DecodeRune(r, lo))
				i += 6
				continue
			}
		}
		if r < 0xdc80 || r > 0xdcff {
			return "", ErrSyntax
		}
		b.WriteByte(byte(r))
	}
	return b.String(), nil
}

func simpleEscape(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c // '"', '\\', '/'
}

func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		default:
			r |= rune(c-'A') + 10
		}
	}
	return r
}
