package canonjson

import (
	"errors"
	"testing"
)

func TestDecodeMatchesPythonLoads(t *testing.T) {
	in := lines(t, "decode.in")
	want := goldenFor(t, in, "decode.golden")
	for i, doc := range in {
		v, err := Decode([]byte(doc))
		if want[i] == "ERROR" {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("Decode(%s) = %v, %v; Python rejects it", doc, v, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Decode(%s): %v", doc, err)
			continue
		}
		got, err := Marshal(v)
		if err != nil || string(got) != want[i] {
			t.Errorf("Decode+Marshal(%s) = %s, %v; Python: %s", doc, got, err, want[i])
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	deep := make([]byte, 0, 2*maxDepth+10)
	for i := 0; i < maxDepth+5; i++ {
		deep = append(deep, '[')
	}
	for _, tc := range []struct {
		name string
		in   string
		want error
	}{
		{"lone high surrogate", `"\ud800"`, ErrLoneSurrogate},
		{"lone low surrogate", `"\udc00x"`, ErrLoneSurrogate},
		{"high then non-low", `"\ud800\u0041"`, ErrLoneSurrogate},
		{"invalid UTF-8", "\"\xff\"", ErrSyntax},
		{"BOM", "\xef\xbb\xbf{}", ErrSyntax},
		{"empty", "", ErrSyntax},
		{"too deep", string(deep), ErrSyntax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Decode([]byte(tc.in)); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzDecode: whatever Decode accepts, Marshal can write, and the result
// decodes to the same canonical bytes (a fixed point).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x"]}`, `[NaN]`, `"\ud83d\ude00"`, `{"b":{},"a":[]}`, `-0`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		if err != nil {
			return
		}
		once, err := Marshal(v)
		if err != nil {
			t.Fatalf("Marshal(Decode(%q)): %v", data, err)
		}
		v2, err := Decode(once)
		if err != nil {
			t.Fatalf("Decode(%s): %v", once, err)
		}
		twice, err := Marshal(v2)
		if err != nil || string(twice) != string(once) {
			t.Fatalf("not a fixed point: %s -> %s (%v)", once, twice, err)
		}
	})
}
