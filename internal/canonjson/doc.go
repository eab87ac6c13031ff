// Package canonjson writes JSON byte-for-byte as Python's json.dumps does
// with sort_keys=True and ensure_ascii=True, either compact
// (separators=(",", ":")) or indented (indent=2).
//
// Receipts are hashed and tree manifests digested over these bytes by tools
// written in Python, so "equivalent JSON" is not enough: every byte must
// match. The promises:
//
//   - object keys are sorted by Unicode code point (Compare), not by UTF-8
//     bytes, with undecodable bytes ordered as the surrogates Python gives
//     them;
//   - the output is pure ASCII: non-ASCII characters become lower-case
//     \uXXXX escapes (a UTF-16 surrogate pair outside the BMP); control
//     characters and DEL become \u00XX except \b \f \n \r \t; only " and \
//     are escaped among printable ASCII (never / < > &);
//   - a Go string is a sequence of bytes: each byte that is not part of a
//     valid UTF-8 sequence is written as the lone surrogate \udcXX, as
//     Python's surrogateescape decoding of a file name would produce;
//   - integers are plain decimals of any size; floats use Python's repr
//     (shortest round-trip digits, exponent form below 1e-4 and from 1e16);
//     NaN and the infinities are written NaN, Infinity, -Infinity as Python
//     does by default; a json.Number is rendered as Python would render the
//     value json.loads gives for it.
//
// Decode is the matching reader: it accepts what Python's json.loads
// accepts (NaN and Infinity included) and nothing else, so that a receipt
// is hashed over the values Python would have seen. A lone surrogate
// escape is refused (ErrLoneSurrogate) rather than silently altered.
//
// Nil maps and slices are null, as in encoding/json. Values of other types
// (structs, json.Marshaler) go through encoding/json first and are then
// re-encoded; that path cannot carry invalid UTF-8 (encoding/json replaces
// it with U+FFFD), so put raw file names in plain strings or maps.
package canonjson
