package proof

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/canonjson"
	"golang.org/x/sys/unix"
)

func integrityJSON(t *testing.T, in Integrity) string {
	t.Helper()
	b, err := canonjson.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeTemp writes data as a receipt file in a fresh directory.
func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "proof.json")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func replaceOnce(t *testing.T, data []byte, old, new string) []byte {
	t.Helper()
	if bytes.Count(data, []byte(old)) < 1 {
		t.Fatalf("%q not in receipt", old)
	}
	return bytes.Replace(data, []byte(old), []byte(new), 1)
}

// TestVerifyReceipts: each receipt and the exact verdict (the JSON that
// verify-proof prints and state.json stores).
func TestVerifyReceipts(t *testing.T) {
	valid := testdata(t, "receipt.valid.json")
	const okVerdict = `{"cost_coherent":true,"degraded":[],"generator_trusted":true,"gpg_ok":"n/a","hash_ok":true,"headline_consistent":true,"ok":true,"reason":"","reasons":[]}`
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"valid", valid, okVerdict},
		{"tampered by one byte", replaceOnce(t, valid, `"output": 34500`, `"output": 34501`),
			`{"cost_coherent":true,"degraded":[],"generator_trusted":true,"gpg_ok":"n/a","hash_ok":false,"headline_consistent":true,"ok":false,` +
				`"reason":"verification.hash does not match the receipt","reasons":["verification.hash does not match the receipt"]}`},
		{"whitespace only changes nothing", bytes.ReplaceAll(valid, []byte("\n"), []byte("\r\n  ")), okVerdict},
		{"headline flipped and resealed", testdata(t, "receipt.flipped.json"),
			`{"cost_coherent":true,"degraded":[],"generator_trusted":true,"gpg_ok":"n/a","hash_ok":true,"headline_consistent":false,"ok":false,` +
				`"reason":"headline \"NOT VERIFIED\" is not what the facts support (\"VERIFIED\")","reasons":["headline \"NOT VERIFIED\" is not what the facts support (\"VERIFIED\")"]}`},
		{"headline flipped in place", replaceOnce(t, valid, `"headline": "VERIFIED"`, `"headline": "NOT VERIFIED"`),
			`{"cost_coherent":true,"degraded":[],"generator_trusted":true,"gpg_ok":"n/a","hash_ok":false,"headline_consistent":false,"ok":false,` +
				`"reason":"verification.hash does not match the receipt","reasons":["verification.hash does not match the receipt","headline \"NOT VERIFIED\" is not what the facts support (\"VERIFIED\")"]}`},
		{"hash missing", testdata(t, "receipt.nohash.json"),
			`{"cost_coherent":true,"degraded":[],"generator_trusted":true,"gpg_ok":"n/a","hash_ok":false,"headline_consistent":true,"ok":false,` +
				`"reason":"verification.hash is missing","reasons":["verification.hash is missing"]}`},
		{"incoherent cost", testdata(t, "receipt.cost.json"),
			`{"cost_coherent":false,"degraded":[],"generator_trusted":true,"gpg_ok":"n/a","hash_ok":true,"headline_consistent":true,"ok":false,` +
				`"reason":"cost is unavailable but reports figures","reasons":["cost is unavailable but reports figures"]}`},
		{"with gaps", testdata(t, "receipt.gaps.json"),
			`{"cost_coherent":true,"degraded":["no-network"],"generator_trusted":true,"gpg_ok":"n/a","hash_ok":true,"headline_consistent":true,"ok":true,"reason":"","reasons":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", t.TempDir()) // no gpg: no signature anyway
			in, err := VerifyFile(writeTemp(t, tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if got := integrityJSON(t, in); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestVerifyFileRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(writeTemp(t, testdata(t, "receipt.valid.json")), link); err != nil {
		t.Fatal(err)
	}
	big := writeTemp(t, append([]byte(`{"pad":"`), append(bytes.Repeat([]byte("x"), MaxReceiptSize), '"', '}')...))
	for _, tc := range []struct {
		name string
		path string
		want error
	}{
		{"non-object root", writeTemp(t, testdata(t, "receipt.array.json")), ErrMalformed},
		{"not JSON", writeTemp(t, []byte(`{"run_id": "run-1",`)), ErrMalformed},
		{"invalid UTF-8", writeTemp(t, []byte("{\"a\":\"\xff\"}")), ErrMalformed},
		{"lone surrogate", writeTemp(t, []byte(`{"a":"\udc80"}`)), ErrMalformed},
		{"missing", filepath.Join(dir, "absent.json"), ErrUnreadable},
		{"directory", dir, ErrUnreadable},
		{"fifo does not block", fifo, ErrUnreadable},
		{"symlink not followed", link, ErrUnreadable},
		{"too large", big, ErrUnreadable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := VerifyFile(tc.path); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestDerive(t *testing.T) {
	good := func() map[string]any {
		return map[string]any{
			"execution": map[string]any{"terminated": false, "exit_code": 0, "run_status": "council_approved", "outcome": "success"},
			"tests":     map[string]any{"status": "passed", "command": "make test", "exit_code": 0},
			"git":       map[string]any{"diff_count": 2},
		}
	}
	with := func(mut func(f map[string]any)) map[string]any { f := good(); mut(f); return f }
	sub := func(f map[string]any, k string) map[string]any { return f[k].(map[string]any) }
	for _, tc := range []struct {
		name  string
		facts map[string]any
		want  string
	}{
		{"verified", good(), Verified},
		{"verified flag instead of status", with(func(f map[string]any) { sub(f, "tests")["status"] = "ran"; sub(f, "tests")["verified"] = true }), Verified},
		{"files_changed counts as diff", with(func(f map[string]any) { f["git"] = map[string]any{"files_changed": 1} }), Verified},
		{"terminated", with(func(f map[string]any) { sub(f, "execution")["terminated"] = true }), NotVerified},
		{"exit code 1", with(func(f map[string]any) { sub(f, "execution")["exit_code"] = 1 }), NotVerified},
		{"exit code not a number", with(func(f map[string]any) { sub(f, "execution")["exit_code"] = "0" }), NotVerified},
		{"run status paused", with(func(f map[string]any) { sub(f, "execution")["run_status"] = "paused" }), NotVerified},
		{"run status policy_blocked", with(func(f map[string]any) { sub(f, "execution")["run_status"] = "policy_blocked" }), NotVerified},
		{"run status max iterations", with(func(f map[string]any) { sub(f, "execution")["run_status"] = "max_iterations_reached" }), NotVerified},
		{"outcome partial", with(func(f map[string]any) { sub(f, "execution")["outcome"] = "partial" }), NotVerified},
		{"tests failed", with(func(f map[string]any) { sub(f, "tests")["status"] = "failed" }), NotVerified},
		{"build failed", with(func(f map[string]any) { f["build"] = map[string]any{"status": "failed"} }), NotVerified},
		{"gate failed", with(func(f map[string]any) {
			f["quality_gates"] = []any{map[string]any{"name": "a", "status": "passed"}, map[string]any{"name": "b", "status": "failed"}}
		}), NotVerified},
		{"security high", with(func(f map[string]any) { f["security"] = map[string]any{"ran": true, "high": 1} }), NotVerified},
		{"security high but not run", with(func(f map[string]any) { f["security"] = map[string]any{"ran": false, "high": 1} }), Verified},
		{"no test command", with(func(f map[string]any) { delete(sub(f, "tests"), "command") }), NotVerified},
		{"test exit code missing", with(func(f map[string]any) { delete(sub(f, "tests"), "exit_code") }), NotVerified},
		{"empty diff", with(func(f map[string]any) { sub(f, "git")["diff_count"] = 0 }), NotVerified},
		{"degraded", with(func(f map[string]any) { f["degraded"] = []any{"no-network"} }), VerifiedWithGaps},
		{"degraded object", with(func(f map[string]any) { f["degraded"] = []any{map[string]any{"name": "x"}} }), VerifiedWithGaps},
		{"degraded map form", with(func(f map[string]any) { f["degraded"] = map[string]any{"x": "reason"} }), VerifiedWithGaps},
		{"post_headline ignored", with(func(f map[string]any) { f["degraded"] = []any{map[string]any{"name": "x", "post_headline": true}} }), Verified},
		{"disabled ignored", with(func(f map[string]any) { f["degraded"] = []any{map[string]any{"name": "x", "disabled": true}} }), Verified},
		{"degraded, only build passed", map[string]any{"build": map[string]any{"status": "passed"}, "degraded": []any{"tests-skipped"}}, VerifiedWithGaps},
		{"degraded, nothing passed", map[string]any{"degraded": []any{"tests-skipped"}}, NotVerified},
		{"degraded beats verified with empty diff", with(func(f map[string]any) { sub(f, "git")["diff_count"] = 0; f["degraded"] = []any{"d"} }), VerifiedWithGaps},
		{"empty facts", map[string]any{}, NotVerified},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Derive(tc.facts); got != tc.want {
				t.Errorf("Derive = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHeadlineConsistency(t *testing.T) {
	facts := map[string]any{"tests": map[string]any{"status": "passed", "command": "t", "exit_code": 0}, "git": map[string]any{"diff_count": 1}}
	yes, no := true, false
	for _, tc := range []struct {
		name string
		doc  map[string]any
		want *bool
	}{
		{"no facts", map[string]any{"headline": Verified}, nil},
		{"no claim", map[string]any{"facts": facts}, nil},
		{"honesty agrees", map[string]any{"facts": facts, "honesty": map[string]any{"headline": Verified}}, &yes},
		{"top-level agrees", map[string]any{"facts": facts, "headline": Verified}, &yes},
		{"top-level disagrees with honesty", map[string]any{"facts": facts, "headline": Verified, "honesty": map[string]any{"headline": NotVerified}}, &no},
		{"honesty disagrees", map[string]any{"facts": facts, "honesty": map[string]any{"headline": VerifiedWithGaps}}, &no},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := checkHeadline(tc.doc, obj(tc.doc, "facts"))
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("consistent = %v, want %v", show(got), show(tc.want))
			}
		})
	}
}

func show(b *bool) string {
	if b == nil {
		return "null"
	}
	if *b {
		return "true"
	}
	return "false"
}

func TestCost(t *testing.T) {
	for _, tc := range []struct {
		name string
		cost any
		want string
	}{
		{"absent", nil, "null"},
		{"available with tokens and usd", map[string]any{"available": true, "tokens": 10, "usd": 0.1}, "true"},
		{"available with tokens only", map[string]any{"available": true, "input_tokens": 10}, "true"},
		{"available with nothing", map[string]any{"available": true}, "false"},
		{"unavailable and empty", map[string]any{"available": false}, "true"},
		{"unavailable with tokens", map[string]any{"available": false, "tokens": map[string]any{"input": 1}}, "false"},
		{"unavailable with usd", map[string]any{"available": false, "usd": 1.5}, "false"},
		{"usd without tokens", map[string]any{"usd": 1.5}, "false"},
		{"tokens object of strings is no tokens", map[string]any{"available": true, "tokens": map[string]any{"input": "1"}, "usd": 1}, "false"},
		{"not an object", "free", "false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := map[string]any{}
			if tc.cost != nil {
				doc["cost"] = tc.cost
			}
			got, reason := checkCost(doc)
			if show(got) != tc.want {
				t.Errorf("cost_coherent = %s, want %s", show(got), tc.want)
			}
			if (tc.want == "false") != (reason != "") {
				t.Errorf("reason %q for verdict %s", reason, tc.want)
			}
		})
	}
}

func TestEmptyMatchesReference(t *testing.T) {
	b, err := canonjson.Marshal(Empty("0b1c", "runner launch failed"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"bound":false,"document_sha256":"","execution":{},"failed_quality_gates":[],"headline":"",` +
		`"integrity":{"degraded":[],"generator_trusted":true,"gpg_ok":"n/a","hash_ok":false,"headline_consistent":null,"ok":false,"reason":"runner launch failed"},` +
		`"present":false,"proof_path":"","proof_url":"/api/control/builds/0b1c/proof","run_id":"","snapshot_error":"","snapshotted":false,"tree_fields_agree":false,"tree_sha256":""}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if !strings.Contains(string(b), `"reason":"runner launch failed"`) {
		t.Error("reason lost")
	}
}
