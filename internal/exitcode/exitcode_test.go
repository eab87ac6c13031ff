package exitcode

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
)

func TestCode(t *testing.T) {
	base := errors.New("boom")
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"nil is success", nil, 0},
		{"failed", Failed(base), 1},
		{"usage", Usage(base), 2},
		{"lease expired", LeaseExpired(nil), 124},
		{"timeout", Timeout(nil), 124},
		{"refused", Refused(base), 125},
		{"cannot execute", CannotExecute(base), 126},
		{"not launched", NotLaunched(base), 127},
		{"wrapped class", fmt.Errorf("ctx: %w", NotLaunched(base)), 127},
		{"class as a %w sentinel", fmt.Errorf("%w: bad flag", ErrUsage), 2},
		{"outermost class wins (remapped)", Refused(fmt.Errorf("stage: %w", NotLaunched(base))), 125},
		{"remapped child code", NotLaunched(Exited(3)), 127},
		{"child's own code", Exited(3), 3},
		{"child's zero", Exited(0), 0},
		{"child's largest", Exited(255), 255},
		{"code above 255", Exited(256), 125},
		{"negative code", Exited(-1), 125},
		{"signalled child", Wait(-1, 9), 137},
		{"exited child", Wait(7, 0), 7},
		{"signalled with a cause", Signalled(15, base), 143},
		{"plain error is a failure", base, 125},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Code(c.err); got != c.want {
				t.Fatalf("Code(%v) = %d, want %d", c.err, got, c.want)
			}
		})
	}
}

func TestClassKeepsCauseAndMessage(t *testing.T) {
	cause := errors.New("no such file")
	err := fmt.Errorf("open: %w", NotLaunched(cause))
	if !errors.Is(err, cause) || !errors.Is(err, ErrNotLaunched) || errors.Is(err, ErrRefused) {
		t.Fatalf("errors.Is does not see both the class and the cause of %v", err)
	}
	if err.Error() != "open: no such file" {
		t.Fatalf("classing changed the message: %q", err)
	}
	if Report(Exited(3)) != nil || Report(Usage(cause)) != cause || Report(cause) != cause {
		t.Fatal("Report must return the cause, nil for a silent outcome")
	}
	if Classified(cause) || !Classified(Exited(0)) || !Classified(fmt.Errorf("%w", ErrUsage)) || !Classified(nil) {
		t.Fatal("Classified is wrong")
	}
}

func TestStatusOfRealChildren(t *testing.T) {
	cases := []struct {
		name      string
		script    string
		code, sig int
		want      int
	}{
		{"success", "exit 0", 0, 0, 0},
		{"own code", "exit 42", 42, 0, 42},
		{"killed", "kill -9 $$", -1, 9, 137},
		{"terminated", "kill -TERM $$", -1, 15, 143},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := exec.Command("/bin/sh", "-c", c.script).Run()
			code, sig, ok := Status(err)
			if !ok || code != c.code || sig != c.sig {
				t.Fatalf("Status(%v) = %d, %d, %v; want %d, %d", err, code, sig, ok, c.code, c.sig)
			}
			if got := Code(Wait(code, sig)); got != c.want {
				t.Fatalf("code %d, want %d", got, c.want)
			}
		})
	}
	if _, _, ok := Status(exec.Command("/nonexistent/x").Run()); ok {
		t.Fatal("a child that never ran has no status")
	}
	if _, _, ok := Status(syscall.ENOENT); ok {
		t.Fatal("a plain error has no status")
	}
}
