package stage

import (
	"reflect"
	"testing"
)

func TestArgsRoundTrip(t *testing.T) {
	args := Args("/run/loki/s/control", "/bin/loki-init", []string{"-grace", "10s"})
	ctl, argv, err := ParseArgs(args)
	if err != nil || ctl != "/run/loki/s/control" || !reflect.DeepEqual(argv, []string{"/bin/loki-init", "-grace", "10s", "/run/loki/s/control"}) {
		t.Fatalf("got %q %q %v", ctl, argv, err)
	}
	for _, bad := range [][]string{nil, {"/c", "/i"}, {"/c", "/i", "/other"}} {
		if _, _, err := ParseArgs(bad); err == nil {
			t.Errorf("ParseArgs(%q) accepted", bad)
		}
	}
}
