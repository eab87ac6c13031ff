package peerenv

import (
	"errors"
	"reflect"
	"testing"
)

func TestBuild(t *testing.T) {
	host := []string{
		"HOME=/home/a", "PATH=/bin", "TERM=xterm", "LOKI_SECRET=hunter2",
		"AWS_SECRET_ACCESS_KEY=k", "LANG=C.UTF-8", "EMPTY=", "broken",
	}
	tests := []struct {
		name       string
		args       []string
		noDefaults bool
		tty        bool
		host       []string
		want       map[string]string
	}{
		{
			name: "defaults only: secrets stay out",
			host: host,
			want: map[string]string{"HOME": "/home/a", "PATH": "/bin", "TERM": "xterm", "LANG": "C.UTF-8"},
		},
		{
			name: "copy by name",
			args: []string{"LOKI_SECRET", "EMPTY"},
			host: host,
			want: map[string]string{"HOME": "/home/a", "PATH": "/bin", "TERM": "xterm", "LANG": "C.UTF-8", "LOKI_SECRET": "hunter2", "EMPTY": ""},
		},
		{
			name: "copy of an unset name adds nothing",
			args: []string{"NOT_SET"},
			host: host,
			want: map[string]string{"HOME": "/home/a", "PATH": "/bin", "TERM": "xterm", "LANG": "C.UTF-8"},
		},
		{
			name: "explicit value overrides a default, value may hold '='",
			args: []string{"TERM=dumb", "OPTS=a=b"},
			host: host,
			want: map[string]string{"HOME": "/home/a", "PATH": "/bin", "TERM": "dumb", "LANG": "C.UTF-8", "OPTS": "a=b"},
		},
		{
			name: "later rule wins",
			args: []string{"X=1", "X=2"},
			host: nil,
			want: map[string]string{"PATH": FallbackPath, "X": "2"},
		},
		{
			name:       "no defaults",
			args:       []string{"HOME"},
			noDefaults: true,
			host:       host,
			want:       map[string]string{"HOME": "/home/a"},
		},
		{
			name: "a terminal's identity only with a terminal",
			host: []string{"PATH=/bin", "COLORTERM=truecolor", "TERM_PROGRAM=tmux"},
			want: map[string]string{"PATH": "/bin"},
		},
		{
			name: "a terminal's identity under -t",
			tty:  true,
			host: []string{"PATH=/bin", "COLORTERM=truecolor", "TERM_PROGRAM=tmux", "LOKI_SECRET=x"},
			want: map[string]string{"PATH": "/bin", "COLORTERM": "truecolor", "TERM_PROGRAM": "tmux"},
		},
		{
			name: "missing PATH gets the fallback",
			host: []string{"HOME=/root"},
			want: map[string]string{"HOME": "/root", "PATH": FallbackPath},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.args, tc.noDefaults)
			if err != nil {
				t.Fatal(err)
			}
			p.TTY = tc.tty
			got := p.Build(tc.host)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Build(%v) = %v, want %v", tc.args, got, tc.want)
			}
		})
	}
}

func TestParseRuleRejects(t *testing.T) {
	tests := []struct {
		arg  string
		want error
	}{
		{"", ErrName},
		{"=v", ErrName},
		{"A\x00B", ErrName},
		{"A=b\x00c", ErrValue},
	}
	for _, tc := range tests {
		_, err := ParseRule(tc.arg)
		if !errors.Is(err, tc.want) {
			t.Errorf("ParseRule(%q) = %v, want %v", tc.arg, err, tc.want)
		}
		if err != nil && tc.want == ErrValue && containsSecret(err.Error()) {
			t.Errorf("error quotes the value: %v", err)
		}
	}
}

func containsSecret(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == 'b' && s[i+1] == 0 {
			return true
		}
	}
	return false
}
