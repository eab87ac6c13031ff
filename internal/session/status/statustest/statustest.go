// Package statustest checks status stream lines against
// docs/status.schema.json, for the tests of every package that emits
// them. It implements the part of JSON Schema that file uses ($ref into
// $defs, oneOf, type, properties, required, additionalProperties,
// propertyNames, enum, const, items, minimum, maximum) and refuses a
// schema keyword it does not know, so the file cannot outgrow it
// unnoticed.
package statustest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
)

var (
	once    sync.Once
	schema  map[string]any
	errLoad error
)

// SchemaPath is docs/status.schema.json in this source tree.
func SchemaPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "docs", "status.schema.json")
}

func load() (map[string]any, error) {
	once.Do(func() {
		b, err := os.ReadFile(SchemaPath())
		if err != nil {
			errLoad = err
			return
		}
		errLoad = json.Unmarshal(b, &schema)
	})
	return schema, errLoad
}

// Validate checks one line: a single JSON object, newline-terminated, of
// the schema.
func Validate(line []byte) error {
	s, err := load()
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	if len(line) == 0 || line[len(line)-1] != '\n' || bytes.Count(line, []byte("\n")) != 1 {
		return fmt.Errorf("not one newline-terminated line: %q", line)
	}
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return fmt.Errorf("not JSON: %v: %q", err, line)
	}
	if d.More() {
		return fmt.Errorf("more than one value: %q", line)
	}
	if err := check(s, s, v, ""); err != nil {
		return fmt.Errorf("%v: %s", err, line)
	}
	return nil
}

// Lines validates every line of a stream and returns the decoded objects.
func Lines(stream []byte) ([]map[string]any, error) {
	var out []map[string]any
	for _, l := range bytes.SplitAfter(stream, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		if err := Validate(l); err != nil {
			return out, err
		}
		var m map[string]any
		json.Unmarshal(l, &m)
		out = append(out, m)
	}
	return out, nil
}

var known = map[string]bool{"$schema": true, "$id": true, "title": true, "$defs": true, "$ref": true, "oneOf": true,
	"type": true, "properties": true, "required": true, "additionalProperties": true, "propertyNames": true,
	"enum": true, "const": true, "items": true, "minimum": true, "maximum": true}

func check(root, s map[string]any, v any, at string) error {
	keys := make([]string, 0, len(s))
	for k := range s {
		if !known[k] {
			return fmt.Errorf("schema keyword %q is not supported by statustest", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if ref, ok := s["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/$defs/")
		defs, _ := root["$defs"].(map[string]any)
		sub, _ := defs[name].(map[string]any)
		if !found || sub == nil {
			return fmt.Errorf("unresolved $ref %q", ref)
		}
		if err := check(root, sub, v, at); err != nil {
			return err
		}
	}
	if alts, ok := s["oneOf"].([]any); ok {
		n, errs := 0, []string{}
		for _, a := range alts {
			if err := check(root, a.(map[string]any), v, at); err == nil {
				n++
			} else {
				errs = append(errs, err.Error())
			}
		}
		if n != 1 {
			return fmt.Errorf("%s: matches %d of oneOf (%s)", at, n, strings.Join(errs, "; "))
		}
	}
	if c, ok := s["const"]; ok && fmt.Sprint(c) != fmt.Sprint(v) {
		return fmt.Errorf("%s: %v, want %v", at, v, c)
	}
	if e, ok := s["enum"].([]any); ok {
		found := false
		for _, x := range e {
			if fmt.Sprint(x) == fmt.Sprint(v) {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s: %v is not one of %v", at, v, e)
		}
	}
	if t, ok := s["type"].(string); ok {
		if err := checkType(t, v, at); err != nil {
			return err
		}
	}
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		if m, ok := s["minimum"].(float64); ok && f < m {
			return fmt.Errorf("%s: %v below %v", at, n, m)
		}
		if m, ok := s["maximum"].(float64); ok && f > m {
			return fmt.Errorf("%s: %v above %v", at, n, m)
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := s["items"].(map[string]any); ok {
			for i, x := range arr {
				if err := check(root, items, x, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return nil
	}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if _, ok := obj[r.(string)]; !ok {
				return fmt.Errorf("%s: %q missing", at, r)
			}
		}
	}
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		x := obj[k]
		if pn, ok := s["propertyNames"].(map[string]any); ok {
			if err := check(root, pn, k, at+"."+k+"(name)"); err != nil {
				return err
			}
		}
		if p, ok := props[k].(map[string]any); ok {
			if err := check(root, p, x, at+"."+k); err != nil {
				return err
			}
			continue
		}
		switch ap := s["additionalProperties"].(type) {
		case bool:
			if !ap {
				return fmt.Errorf("%s: unexpected field %q", at, k)
			}
		case map[string]any:
			if err := check(root, ap, x, at+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkType(t string, v any, at string) error {
	ok := false
	switch t {
	case "object":
		_, ok = v.(map[string]any)
	case "array":
		_, ok = v.([]any)
	case "string":
		_, ok = v.(string)
	case "boolean":
		_, ok = v.(bool)
	case "number":
		_, ok = v.(json.Number)
	case "integer":
		if n, isN := v.(json.Number); isN {
			_, err := n.Int64()
			ok = err == nil
		}
	}
	if !ok {
		return fmt.Errorf("%s: %v is not %s", at, v, t)
	}
	return nil
}
