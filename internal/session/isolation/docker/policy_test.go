package docker

import (
	"reflect"
	"testing"

	"github.com/loki-sh/loki/internal/session/confine"
)

// TestWithPolicy: the policy becomes docker run's flags (what
// cmd/loki-supervise used to write itself), and the backend's own binds
// are not changed under it.
func TestWithPolicy(t *testing.T) {
	own := make([]string, 1, 4) // room to append in place
	own[0] = "/src:/work"
	o := Options{Binds: own}
	p := confine.Policy{
		User: &confine.User{UID: 1000, GID: 1001}, Network: confine.NetworkLoopback,
		Write: []string{"/w"}, Hide: []string{"/h"}, Protect: []string{"/w/.git/hooks"},
		Resources: confine.Resources{MemoryMax: 64 << 20, CPU: &confine.CPUMax{Quota: 50000, Period: 100000}},
	}
	got := o.withPolicy(p)
	want := Options{PidsLimit: confine.DefaultPidsMax, MemoryMax: 64 << 20, CPUs: "0.5", User: "1000:1001", Network: "none",
		Binds: []string{"/src:/work", "/w:/w", "/w/.git/hooks:/w/.git/hooks:ro"}, Hide: []string{"/h"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("withPolicy:\n got %+v\nwant %+v", got, want)
	}
	if own[:2][1] != "" {
		t.Errorf("withPolicy wrote into the backend's own binds: %q", own[:2])
	}
	if d := (Options{}).withPolicy(confine.Policy{Resources: confine.Resources{PidsMax: confine.Unlimited}}); d.PidsLimit != 0 || d.Network != "" || d.User != "" {
		t.Errorf("default policy: %+v, want docker's defaults and no pids limit", d)
	}
}
