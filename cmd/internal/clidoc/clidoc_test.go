package clidoc

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestRoffEscapes(t *testing.T) {
	cases := []struct{ in, want string }{
		{`a\b`, `a\eb`},
		{"--flag", `\-\-flag`},
		{".TH looks like a request", `\&.TH looks like a request`},
		{"x\n'quoted line", "x\n\\&'quoted line"},
	}
	for _, tc := range cases {
		if got := roff(tc.in); got != tc.want {
			t.Errorf("roff(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestManAndCompletionsCoverHiddenAndNested(t *testing.T) {
	cmds := []*cli.Command{
		{Name: "top", Usage: "u", Flags: []cli.Flag{
			&cli.StringFlag{Name: "mode", Usage: "a | b"},
			&cli.BoolFlag{Name: "secret", Hidden: true},
		}, Subcommands: []*cli.Command{{Name: "sub", Usage: "s"}}},
		{Name: "gone", Hidden: true},
	}
	var man strings.Builder
	if err := Man(&man, Page{Name: "p", Section: 1, Summary: "x"}, []Group{{"G", cmds}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`.B p top`, `.B p top sub`, `\fB\-\-mode\fR \fIVALUE\fR`} {
		if !strings.Contains(man.String(), want) {
			t.Errorf("page lacks %q:\n%s", want, man.String())
		}
	}
	for _, not := range []string{"secret", "gone"} {
		if strings.Contains(man.String(), not) {
			t.Errorf("page shows hidden %q", not)
		}
	}
	var b strings.Builder
	if err := Bash(&b, "p", cmds, Choices{"mode": {"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `'top:--mode') COMPREPLY=($(compgen -W 'a b'`) || strings.Contains(b.String(), "secret") {
		t.Errorf("bash script:\n%s", b.String())
	}
	if got := Paths(cmds); strings.Join(got, ",") != "top,top sub" {
		t.Errorf("Paths = %v", got)
	}
}
