// Package pycompat answers as the reference supervisor's Python (3.11)
// does wherever loki must read or write what that Python reads or writes:
// the exception class an error raises, int(str), float(str), str.strip()
// and repr(str).
//
// Guarantees:
//   - Each function returns what CPython returns for the same input, or
//     refuses what CPython refuses; the tests check every row against the
//     installed python3. The one departure is Int's range: an integer
//     outside int is refused, where Python would return a big int.
//   - Unicode is the Go toolchain's, which may be newer than the
//     reference's Python: a character only the newer version assigns is
//     printable to Repr and, if a digit, a digit to Int and Float.
//   - ErrnoClass is CPython's errno-to-OSError-subclass table (PEP 3151)
//     and nothing else, so every record that names a failure by its class
//     names it as the reference would.
//   - Nothing here imports anything of loki: every layer may use it.
package pycompat
