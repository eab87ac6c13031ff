package proof

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzVerify: no receipt bytes make the verifier panic, and a verdict is
// never ok without a matching hash.
func FuzzVerify(f *testing.F) {
	for _, name := range []string{"receipt.valid.json", "receipt.gaps.json", "receipt.cost.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"verification":{"hash":""},"facts":{"degraded":{"a":{"disabled":true}}},"cost":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := parse(data)
		if err != nil {
			return
		}
		in := Verify(doc, Signature{Data: data})
		if in.OK && !in.HashOK {
			t.Fatalf("ok without hash: %+v", in)
		}
		if in.OK != (len(in.Reasons) == 0) {
			t.Fatalf("ok=%v with reasons %q", in.OK, in.Reasons)
		}
	})
}
