package stage

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/session/confine"
)

// wireStrings are values that would break a naive line format.
var wireStrings = []string{"/tmp/a b", "/x\nend\n", `/q"uote\`, "/\xff\xfe not utf-8", "", "end", "/é\t\r"}

// fill sets every field reachable from v (pointers allocated, slices of
// two) to a value that is not zero, taking strings from wireStrings in
// turn: a field Encode forgets comes back zero.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(v.Index(0), n)
		fill(v.Index(1), n)
	case reflect.String:
		s := wireStrings[*n%len(wireStrings)]
		if s == "" {
			s = "x"
		}
		v.SetString(s)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(*n) * -1)
		if v.Type().Name() == "int" {
			v.SetInt(int64(*n)) // descriptors
		}
	case reflect.Uint32, reflect.Uint64:
		v.SetUint(1<<32 - 1 - uint64(*n))
	default:
		panic("fill: no value for " + v.Type().String())
	}
}

func TestPolicyWireRoundTrip(t *testing.T) {
	var full Policy
	n := 0
	fill(reflect.ValueOf(&full).Elem(), &n)
	full.Late = Late{} // travels on LateFD
	full.Cgroup.Name = ""
	for _, p := range []Policy{{}, full, {Cgroup: &Cgroup{}}, {Policy: confine.Policy{Write: []string{""}}}} {
		got, err := ParsePolicy(p.Encode())
		if err != nil {
			t.Fatalf("%q: %v", p.Encode(), err)
		}
		if !reflect.DeepEqual(got, p) {
			t.Errorf("round trip of %q:\n got %+v\nwant %+v", p.Encode(), got, p)
		}
	}
	var late Late
	fill(reflect.ValueOf(&late).Elem(), &n)
	for _, l := range []Late{{}, late} {
		got, err := ParseLate(l.Encode())
		if err != nil || !reflect.DeepEqual(got, l) {
			t.Errorf("round trip of %q: %+v, %v", l.Encode(), got, err)
		}
	}
}

// TestPolicyWireRefuses: a document this build cannot have written
// (another build's, one cut short, one with a key it does not know) is
// refused whole, never read in part.
func TestPolicyWireRefuses(t *testing.T) {
	good := Policy{Policy: confine.Policy{Write: []string{"/w"}}, LateFD: 5, Cgroup: &Cgroup{Name: "s", V1: []string{"pids"}}}.Encode()
	if _, err := ParsePolicy(good); err != nil {
		t.Fatal(err)
	}
	body := strings.TrimPrefix(strings.TrimSuffix(good, "end\n"), policyHeader+"\n")
	for _, doc := range []string{
		"",
		`{"FS":"","Write":["/w"],"late_fd":5}`, // a build before this format
		"loki-stage-policy 0\n" + body + "end\n",
		"loki-stage-policy 2\n" + body + "end\n",
		policyHeader + "\n" + body,                                             // cut short
		policyHeader + "\n" + body + "end",                                     // cut short
		policyHeader + "\n" + body + "end\nend\n",                              // after its end
		policyHeader + "\n" + body + "future-key 1\nend\n",                     // a newer build's key
		policyHeader + "\n" + body + "late-fd 6\nend\n",                        // twice
		policyHeader + "\n" + body + "tty 1\nend\n",                            // a flag with a value
		policyHeader + "\n" + body + "tty \nend\n",                             // a flag with a value
		policyHeader + "\n" + body + "write /x\nend\n",                         // unquoted
		policyHeader + "\n" + body + "write `/x`\nend\n",                       // not Go's "..."
		policyHeader + "\n" + body + "write \"/x\" \nend\n",                    // trailing space
		policyHeader + "\n" + body + "notify-fd 07\nend\n",                     // not as Encode writes it
		policyHeader + "\n" + body + "notify-fd +7\nend\n",                     // not as Encode writes it
		policyHeader + "\n" + body + "notify-fd 0\nend\n",                      // a zero is omitted
		policyHeader + "\n" + body + "notify-fd 4294967296\nend\n",             // out of range
		policyHeader + "\n" + body + "user 1\nend\n",                           // no gid
		policyHeader + "\n" + body + "user -1 0\nend\n",                        // no such id
		policyHeader + "\n" + body + "cpu 1\nend\n",                            // no period
		policyHeader + "\ncgroup-v1 \"pids\"\nend\n",                           // no cgroup
		policyHeader + "\r\n" + body + "end\n",                                 // another line end
		strings.Replace(good, "\n", "\n\n", 1),                                 // an empty line
		strings.Replace(good, "write", "WRITE", 1),                             // keys are exact
		strings.Replace(good, "late-fd 5", "late-fd 5 ", 1),                    // trailing space
		strings.Replace(good, "late-fd 5", "late-fd  5", 1),                    // two spaces
		strings.Replace(good, "cgroup \"s\"", "cgroup \"s\"\ncgroup \"t\"", 1), // twice
	} {
		if p, err := ParsePolicy(doc); !errors.Is(err, ErrWire) {
			t.Errorf("%q: %+v, %v; want ErrWire", doc, p, err)
		}
	}
	_, err := ParsePolicy(`{"FS":""}`)
	if msg := err.Error(); !strings.Contains(msg, "JSON") || !strings.Contains(msg, FormatHint) || strings.Contains(msg, "\n") {
		t.Errorf("an older build's policy: %q, want one line naming the fix", msg)
	}
	for _, doc := range []string{
		"",
		`{"mask":["/run/a.sock"]}`,
		lateHeader + "\nmask \"/a\"\n",
		lateHeader + "\nmask \"/a\"\nother-root \"/r\"\nend\nmask \"/b\"\n",
		lateHeader + "\nroot \"/r\"\nend\n",
		lateHeader + "\nmask /a\nend\n",
	} {
		if l, err := ParseLate([]byte(doc)); !errors.Is(err, ErrWire) {
			t.Errorf("late %q: %+v, %v; want ErrWire", doc, l, err)
		}
	}
}

// FuzzParsePolicy: whatever the stage accepts, it reads again the same
// from what the supervisor would write for it.
func FuzzParsePolicy(f *testing.F) {
	var full Policy
	n := 0
	fill(reflect.ValueOf(&full).Elem(), &n)
	full.Late = Late{}
	f.Add(full.Encode())
	f.Add(Policy{}.Encode())
	f.Add(policyHeader + "\nuser 0 0\ncpu -1 0\nend\n")
	f.Fuzz(func(t *testing.T, doc string) {
		p, err := ParsePolicy(doc)
		if err != nil {
			if !errors.Is(err, ErrWire) {
				t.Fatalf("%q: %v is not ErrWire", doc, err)
			}
			return
		}
		again, err := ParsePolicy(p.Encode())
		if err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("%q: %+v, then %+v, %v", doc, p, again, err)
		}
	})
}
