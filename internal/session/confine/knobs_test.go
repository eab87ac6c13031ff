package confine

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// knobFields maps every field of Policy (Resources' fields by their own
// name) to the knobs it asks for. A new field fails TestEveryFieldIsAKnob
// until it is listed here, with a Knob of its own in Knobs and Asks; a
// new Knob then fails the backend table test in session/isolation until
// every backend declares it.
var knobFields = map[string][]Knob{
	"User":                {KnobUser},
	"UserNS":              {KnobUserNSPrivate, KnobUserNSHost},
	"Network":             {KnobNetworkLoopback, KnobNetworkNone},
	"FS":                  {KnobFSConfined, KnobFSHost},
	"Write":               {KnobWrite},
	"Hide":                {KnobHide},
	"Protect":             {KnobProtect},
	"Sockets":             {KnobSocket},
	"Resources.TmpSize":   {KnobTmpSize},
	"Allow":               {KnobAllowHost},
	"Resources.PidsMax":   {KnobPidsMax},
	"Resources.MemoryMax": {KnobMemoryMax},
	"Resources.CPU":       {KnobCPUMax},
}

func TestEveryFieldIsAKnob(t *testing.T) {
	var fields []string
	walk := func(prefix string, typ reflect.Type) {
		for f := range typ.Fields() {
			fields = append(fields, prefix+f.Name)
		}
	}
	for f := range reflect.TypeFor[Policy]().Fields() {
		if f.Type == reflect.TypeFor[Resources]() {
			walk(f.Name+".", f.Type)
			continue
		}
		fields = append(fields, f.Name)
	}
	for _, f := range fields {
		if _, ok := knobFields[f]; !ok {
			t.Errorf("Policy field %s is no knob: add a Knob for it (knobs.go: Knobs, Asks, Sample), list it in knobFields, and declare it in every backend's Capabilities", f)
		}
	}
	var listed []Knob
	for f, ks := range knobFields {
		if !slices.Contains(fields, f) {
			t.Errorf("knobFields names %s, which Policy does not have", f)
		}
		listed = append(listed, ks...)
	}
	for _, k := range Knobs {
		if k != KnobTTY && !slices.Contains(listed, k) {
			t.Errorf("knob %s belongs to no Policy field in knobFields", k)
		}
	}
}

func TestAsks(t *testing.T) {
	if ks := (Policy{}).Asks(); len(ks) != 0 {
		t.Errorf("the default policy asks for %v", ks)
	}
	if ks := (Policy{Resources: Resources{PidsMax: Unlimited}}).Asks(); len(ks) != 0 {
		t.Errorf("--pids-max max asks for %v: no limit is no knob", ks)
	}
	for _, k := range Knobs {
		p, tty := Sample(k)
		want := []Knob{k}
		switch k {
		case KnobTTY:
			want = nil
			if !tty {
				t.Errorf("Sample(%s) does not ask for it", k)
			}
		case KnobAllowHost:
			want = []Knob{k, KnobNetworkLoopback}
		}
		if ks := p.Asks(); !slices.Equal(ks, want) {
			t.Errorf("Sample(%s) = %+v asks for %v, want %v: add the knob to Sample and Asks", k, p, ks, want)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("Sample(%s): %v", k, err)
		}
	}
	all := Policy{User: &User{}, Allow: []string{"x"}, Network: NetworkLoopback, Write: []string{"/w"}, Resources: Resources{CPU: &CPUMax{}}}
	want := []Knob{KnobUser, KnobAllowHost, KnobNetworkLoopback, KnobWrite, KnobCPUMax}
	if ks := all.Asks(); !slices.Equal(ks, want) {
		t.Errorf("Asks = %v, want %v (refusal order)", ks, want)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Policy
		want string // "" valid; else a substring of the one line
	}{
		{"default", Policy{}, ""},
		{"user", Policy{User: &User{UID: 1}}, ""},
		{"user and userns host", Policy{User: &User{UID: 1}, UserNS: UserNSHost}, ""},
		{"user and userns private", Policy{User: &User{UID: 1}, UserNS: UserNSPrivate}, "--user with --userns private: pick one"},
		{"write", Policy{Write: []string{"/w"}}, ""},
		{"write and fs host", Policy{FS: FSHost, Write: []string{"/w"}}, "--write: with --fs host"},
		{"hide and fs host", Policy{FS: FSHost, Hide: []string{"/h"}}, ""},
		{"allow-host", Policy{Allow: []string{"a"}, Network: NetworkLoopback}, ""},
		{"allow-host and network none", Policy{Allow: []string{"a"}, Network: NetworkNone}, "drop --network none (or say loopback)"},
		{"allow-host and network host", Policy{Allow: []string{"a"}, Network: NetworkHost}, "drop --network host"},
		{"allow-host without network", Policy{Allow: []string{"a"}}, "drop --network host"},
	} {
		err := tc.p.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: %v, want one line with %q", tc.name, err, tc.want)
		case err != nil && !errors.Is(err, ErrPolicy):
			t.Errorf("%s: %v does not wrap ErrPolicy", tc.name, err)
		}
	}
}

func TestPrivateUserNS(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want bool
	}{
		{Policy{}, true},
		{Policy{UserNS: UserNSPrivate}, true},
		{Policy{UserNS: UserNSHost}, false},
		{Policy{User: &User{UID: 1}}, false},
		{Policy{FS: FSHost}, false},
		{Policy{FS: FSHost, UserNS: UserNSPrivate}, true},
	} {
		if got := tc.p.PrivateUserNS(); got != tc.want {
			t.Errorf("%+v: PrivateUserNS %v, want %v", tc.p, got, tc.want)
		}
	}
}
