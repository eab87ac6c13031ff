package proof

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
)

// The three headlines a receipt can carry.
const (
	Verified         = "VERIFIED"
	VerifiedWithGaps = "VERIFIED WITH GAPS"
	NotVerified      = "NOT VERIFIED"
)

// failedRunStatuses are the execution.run_status values of a run that did
// not finish its work.
var failedRunStatuses = map[string]bool{
	"failed": true, "interrupted": true, "paused": true,
	"policy_blocked": true, "max_iterations_reached": true,
}

// goodOutcomes are the execution.outcome values of a finished run.
var goodOutcomes = map[string]bool{"complete": true, "completed": true, "success": true}

// failedStatuses are the tests/build/quality-gate statuses that fail.
var failedStatuses = map[string]bool{"failed": true, "error": true}

// Derive re-derives the headline from a receipt's facts, rules in order:
// a failure anywhere is NOT VERIFIED; tests verified by a command that
// exited 0, nothing degraded and a non-empty diff is VERIFIED; something
// verified or passed with something degraded is VERIFIED WITH GAPS;
// anything else is NOT VERIFIED. docs/proof.md lists the facts read.
func Derive(facts map[string]any) string {
	if failed(facts) {
		return NotVerified
	}
	degraded := len(countingDegraded(facts)) > 0
	if testsVerified(facts) && !degraded && diffCount(facts) != 0 {
		return Verified
	}
	if degraded && anythingPassed(facts) {
		return VerifiedWithGaps
	}
	return NotVerified
}

func obj(m map[string]any, key string) map[string]any {
	v, _ := m[key].(map[string]any)
	return v
}

func str(m map[string]any, key string) string {
	v, _ := m[key].(string)
	return v
}

func failed(facts map[string]any) bool {
	exec := obj(facts, "execution")
	if t, _ := exec["terminated"].(bool); t {
		return true
	}
	if code, present := exec["exit_code"]; present && code != nil && !isZero(code) {
		return true // a non-zero or non-numeric exit code
	}
	if failedRunStatuses[str(exec, "run_status")] {
		return true
	}
	if out, present := exec["outcome"]; present && out != nil {
		if s, _ := out.(string); !goodOutcomes[s] {
			return true
		}
	}
	for _, part := range []string{"tests", "build"} {
		p := obj(facts, part)
		if failedStatuses[str(p, "status")] {
			return true
		}
		if code, present := p["exit_code"]; present && code != nil && !isZero(code) {
			return true
		}
	}
	for _, g := range gates(facts) {
		if failedStatuses[str(g, "status")] {
			return true
		}
	}
	sec := obj(facts, "security")
	if ran, _ := sec["ran"].(bool); ran {
		if high, ok := number(sec["high"]); ok && high > 0 {
			return true
		}
	}
	return false
}

// testsVerified: tests claim verified (or passed), name the command that
// verified them, and report its exit code as 0.
func testsVerified(facts map[string]any) bool {
	tests := obj(facts, "tests")
	verified, _ := tests["verified"].(bool)
	st := str(tests, "status")
	if !verified && st != "passed" && st != "verified" {
		return false
	}
	code, ok := number(tests["exit_code"])
	return str(tests, "command") != "" && ok && code == 0
}

func anythingPassed(facts map[string]any) bool {
	if testsClaimPass(obj(facts, "tests")) || str(obj(facts, "build"), "status") == "passed" {
		return true
	}
	for _, g := range gates(facts) {
		if str(g, "status") == "passed" {
			return true
		}
	}
	return false
}

func testsClaimPass(tests map[string]any) bool {
	v, _ := tests["verified"].(bool)
	st := str(tests, "status")
	return v || st == "passed" || st == "verified"
}

// diffCount is facts.git.diff_count, or files_changed; 0 when neither is
// a number.
func diffCount(facts map[string]any) float64 {
	git := obj(facts, "git")
	for _, k := range []string{"diff_count", "files_changed"} {
		if n, ok := number(git[k]); ok {
			return n
		}
	}
	return 0
}

func gates(facts map[string]any) []map[string]any {
	list, _ := facts["quality_gates"].([]any)
	var out []map[string]any
	for _, g := range list {
		if m, ok := g.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// countingDegraded lists the names of facts.degraded items that count
// against the headline. Items are strings, or objects with a name whose
// post_headline or disabled flag exempts them; facts.degraded may also be
// an object mapping names to such items.
func countingDegraded(facts map[string]any) []string {
	out := []string{}
	add := func(name string, item any) {
		if m, ok := item.(map[string]any); ok {
			if exempt(m) {
				return
			}
			if n := str(m, "name"); n != "" {
				name = n
			}
		}
		if item == nil || item == false {
			return
		}
		out = append(out, name)
	}
	switch d := facts["degraded"].(type) {
	case []any:
		for _, item := range d {
			name, _ := item.(string)
			add(name, item)
		}
	case map[string]any:
		for _, k := range sortedKeys(d) {
			add(k, d[k])
		}
	}
	return out
}

func exempt(item map[string]any) bool {
	post, _ := item["post_headline"].(bool)
	disabled, _ := item["disabled"].(bool)
	return post || disabled
}

func isNumber(v any) bool {
	_, ok := number(v)
	return ok
}

// number reads a JSON number (json.Number from canonjson.Decode, or a
// float64 / int from a caller); booleans are not numbers.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		// Out-of-range literals are ±Inf or 0, as Python's float() makes them.
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, false
		}
		return f, true
	case float64:
		return n, !math.IsNaN(n)
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// isZero is Python's `value == 0` for JSON values: true for any numeric
// zero and, as in Python, for false.
func isZero(v any) bool {
	if b, ok := v.(bool); ok {
		return !b
	}
	n, ok := number(v)
	return ok && n == 0
}
