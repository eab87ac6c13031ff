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

// TestCgroupHolds: the stage's check of its own /proc/self/cgroup.
func TestCgroupHolds(t *testing.T) {
	hybrid := "9:name=systemd:/\n8:pids:/loki-session-a\n4:memory:/x/loki-session-a\n1:cpu,cpuacct:/loki-session-a\n0::/\n"
	v2 := "0::/user.slice/loki-session-a\n"
	for _, tc := range []struct {
		c    Cgroup
		self string
		ok   bool
	}{
		{Cgroup{Name: "loki-session-a", V1: []string{"cpu", "memory", "pids"}}, hybrid, true},
		{Cgroup{Name: "loki-session-a", V1: []string{"pids"}}, hybrid, true},
		// Started in the supervisor's cgroup and moved later (the old way).
		{Cgroup{Name: "loki-session-a", V1: []string{"pids"}}, "8:pids:/\n0::/\n", false},
		{Cgroup{Name: "loki-session-a", V1: []string{"memory"}}, "4:memory:/x\n", false},
		{Cgroup{Name: "loki-session-a", V1: []string{"blkio"}}, hybrid, false},
		{Cgroup{Name: "loki-session-a"}, v2, true},
		{Cgroup{Name: "loki-session-a"}, hybrid, false},
		{Cgroup{Name: "loki-session-a"}, "0::/user.slice/loki-session-ab\n", false},
		{Cgroup{Name: "loki-session-a"}, "0::/loki-session-a/peer\n", false},
		{Cgroup{}, v2, false},
	} {
		if err := tc.c.Holds(tc.self); (err == nil) != tc.ok {
			t.Errorf("%+v in %q: %v, want ok %v", tc.c, tc.self, err, tc.ok)
		}
	}
}
