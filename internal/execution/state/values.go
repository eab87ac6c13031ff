//go:build unix

package state

import (
	"encoding/json"
	"strconv"
)

// Str returns the string field k, or "" when absent or of another type.
func (st State) Str(k string) string {
	s, _ := st[k].(string)
	return s
}

// Int returns the integer field k; ok is false when absent, null, or not
// an integer.
func (st State) Int(k string) (int, bool) {
	switch v := st[k].(type) {
	case json.Number:
		n, err := strconv.Atoi(v.String())
		return n, err == nil
	case int:
		return v, true
	case int64:
		return int(v), true
	case float64:
		if v == float64(int(v)) {
			return int(v), true
		}
	}
	return 0, false
}

// Truthy mirrors Python's bool() for JSON values: false for absent, null,
// false, 0, "" and empty containers.
func (st State) Truthy(k string) bool {
	switch v := st[k].(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case json.Number:
		f, err := v.Float64()
		return err != nil || f != 0
	case float64:
		return v != 0
	case int:
		return v != 0
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return true
}

// Map returns the object field k, or nil.
func (st State) Map(k string) map[string]any {
	m, _ := st[k].(map[string]any)
	return m
}
