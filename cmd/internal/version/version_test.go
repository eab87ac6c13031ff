package version

import (
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/loki-sh/loki", Version: "v0.3.1-0.20261205220000-0123456789ab+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-12-05T22:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	cases := []struct {
		name     string
		bi       *debug.BuildInfo
		ok       bool
		line     string // a prefix of String()
		dirty    bool
		commitIn bool
	}{
		{"checkout", bi, true, "loki-init v0.3.1-0.20261205220000-0123456789ab (commit 0123456789ab, dirty tree) go1.26.8 ", true, true},
		{"no build info", nil, false, "loki-init unknown ", false, false},
		{"go install of a tag", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.0.0"}}, true, "loki-init v1.0.0 go1.26.8 ", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			i := fromBuildInfo("loki-init", tc.bi, tc.ok)
			if !strings.HasPrefix(i.String(), tc.line) {
				t.Fatalf("String() = %q, want prefix %q", i.String(), tc.line)
			}
			if i.Dirty != tc.dirty || (i.Commit != "") != tc.commitIn {
				t.Fatalf("%+v", i)
			}
			var back Info
			if err := json.Unmarshal([]byte(i.JSON()), &back); err != nil || back != i {
				t.Fatalf("JSON round trip: %v %+v", err, back)
			}
		})
	}
}
