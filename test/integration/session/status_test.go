//go:build linux

package session

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/session/status/statustest"
	"github.com/loki-sh/loki/internal/testutil"
)

// streamOf reads a status file, validating every line against
// docs/status.schema.json.
func streamOf(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := statustest.Lines(b)
	if err != nil {
		t.Fatalf("status stream: %v", err)
	}
	return lines
}

// statusRun runs one session with --status-file and returns its result
// and its stream's lines.
func statusRun(t *testing.T, b backend, flags []string, stdin string, peer ...string) (result, []map[string]any) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "status.jsonl")
	r := run(t, supervise(t, b, append([]string{"--status-file", path}, flags...), peer...), stdin, generous)
	return r, streamOf(t, path)
}

// events are the lines' event names, and refused lines as event:what.
func events(lines []map[string]any) string {
	var out []string
	for _, l := range lines {
		e := l["event"].(string)
		if w, ok := l["what"].(string); ok {
			e += ":" + w
		}
		out = append(out, e)
	}
	return strings.Join(out, " ")
}

func endOf(t *testing.T, lines []map[string]any) map[string]any {
	t.Helper()
	if len(lines) == 0 || lines[len(lines)-1]["event"] != "end" {
		t.Fatalf("no end event last: %q", events(lines))
	}
	return lines[len(lines)-1]
}

// TestStatusStream: on every backend, the stream of a session has a start
// naming the backend, the refusals the backend observes, and an end whose
// code is the session's and whose reason is the one way it ended. Every
// line validates against the schema.
func TestStatusStream(t *testing.T) {
	const memHog = `x=$(head -c 200000000 /dev/zero | tr '\0' a); echo ${#x}`
	const forkBomb = `i=0; while [ $i -lt 80 ]; do sleep 5 & i=$((i+1)); done 2>/dev/null; wait`
	for _, b := range relayBackends() {
		t.Run(b.Name, func(t *testing.T) {
			type tc struct {
				name   string
				flags  []string
				stdin  string
				script string
				code   int
				reason string
				events string
			}
			cases := []tc{
				{"peer exit", nil, "", "exit 3", 3, "peer-exit", "start end"},
				{"eof ended", nil, "", "sleep 60", 0, "eof-ended", "start end"},
				{"eof cut output", nil, "", "while :; do echo x; sleep 0.05; done", 125, "eof-cut-output", "start end"},
			}
			if b.Name != "none" {
				cases = append(cases,
					tc{"pids max", []string{"--pids-max", "40", "--eof", "wait"}, "", forkBomb, 125, "limit-pids", "start refused:pids end"},
					tc{"memory max", []string{"--memory-max", "32M", "--eof", "wait"}, "", memHog, 137, "limit-memory", "start refused:memory end"},
				)
			} else {
				cases = append(cases, tc{"limit refused at start", []string{"--pids-max", "40"}, "", "true", 127, "refused-start", "end"})
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					r, lines := statusRun(t, b, c.flags, c.stdin, "sh", "-c", c.script)
					end := endOf(t, lines)
					if r.code != c.code || int(end["code"].(float64)) != c.code || end["reason"] != c.reason || events(lines) != c.events {
						t.Fatalf("exit %d; stream %q, end %v; want %d, %s, %q (stderr %q)", r.code, events(lines), end, c.code, c.reason, c.events, r.stderr)
					}
					if lines[0]["event"] == "start" {
						if lines[0]["backend"] != strings.SplitN(b.Name, "-", 2)[0] {
							t.Fatalf("start names backend %v", lines[0]["backend"])
						}
						// What no backend reports yet is said, never
						// left for "nothing refused".
						cannot := lines[0]["cannot"].(map[string]any)
						unseen := []string{"write", "read", "exec", "connect"}
						if b.Name != "namespace" {
							unseen = append(unseen, "syscall") // the namespace backend's listener reports them
						} else if cannot["syscall"] != nil {
							t.Fatalf("start says syscall refusals are not observed: %v", cannot["syscall"])
						}
						for _, k := range unseen {
							if cannot[k] == nil {
								t.Fatalf("start does not say %s refusals are not observed: %v", k, cannot)
							}
						}
					}
					if c.code == 125 && c.reason == "limit-pids" && !strings.Contains(r.stderr, "pids limit") {
						t.Fatalf("stderr %q", r.stderr)
					}
					// A limit hit is said once, as the limit: not first
					// as what followed from it (the peer killed, its
					// output held).
					if strings.HasPrefix(c.reason, "limit-") && strings.Contains(r.stderr, "ACP supervisor") {
						t.Fatalf("a limit hit said twice: %q", r.stderr)
					}
				})
			}
		})
	}
}

// TestStatusFacts: on every backend with loki-init, the end event has
// the init's facts, not a guess from its code: which 125 it was (with
// the signal), the output bytes it forwarded, and start has the peer's
// pid as the host sees it. The init's line is said once, with its facts.
func TestStatusFacts(t *testing.T) {
	for _, b := range relayBackends() {
		if !b.Init() {
			continue
		}
		t.Run(b.Name, func(t *testing.T) {
			t.Run("peer killed by a signal", func(t *testing.T) {
				r, lines := statusRun(t, b, nil, "", "sh", "-c", "kill -9 $$")
				end := endOf(t, lines)
				if r.code != 125 || end["reason"] != "peer-signal" || end["signal"] != 9.0 {
					t.Fatalf("exit %d, end %v (stderr %q)", r.code, end, r.stderr)
				}
				if want := "ACP supervisor refused at supervision: peer-signaled by signal 9 (SIGKILL)\n"; r.stderr != want {
					t.Fatalf("stderr %q, want %q", r.stderr, want)
				}
			})
			t.Run("output held", func(t *testing.T) {
				r, lines := statusRun(t, b, nil, "", "sh", "-c", "sleep 30 & exit 0")
				end := endOf(t, lines)
				if r.code != 125 || end["reason"] != "output-held" {
					t.Fatalf("exit %d, end %v (stderr %q)", r.code, end, r.stderr)
				}
				if want := "ACP supervisor refused at supervision: output-held\n"; r.stderr != want {
					t.Fatalf("stderr %q, want %q", r.stderr, want)
				}
			})
			t.Run("bytes forwarded", func(t *testing.T) {
				r, lines := statusRun(t, b, []string{"--relay", "--eof", "wait"}, "hello",
					"sh", "-c", "cat; head -c 10000 /dev/zero; head -c 7 /dev/zero >&2")
				end := endOf(t, lines)
				if r.code != 0 || end["reason"] != "peer-exit" || end["bytes_out"] != 10012.0 || end["bytes_in"] != 5.0 {
					t.Fatalf("exit %d, end %v, want 5 bytes in and 10012 out (stderr %q)", r.code, end, r.stderr)
				}
			})
			t.Run("peer pid", func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "status.jsonl")
				cmd, rd, _ := startReady(t, b, []string{"--status-file", path}, "exec sleep 1000")
				defer func() {
					cmd.Process.Signal(syscall.SIGTERM)
					testutil.WaitExit(t, cmd, generous)
				}()
				var start map[string]any
				for deadline := time.Now().Add(generous); start == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					if b, err := os.ReadFile(path); err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
						start = streamOf(t, path)[0]
					}
				}
				if start == nil {
					t.Fatal("no start event")
				}
				peer, ok := start["peer_pid"].(float64)
				if !ok || start["init_pid"] == nil {
					t.Fatalf("start %v: no peer_pid or init_pid", start)
				}
				p := strconv.Itoa(int(peer))
				comm, _ := os.ReadFile("/proc/" + p + "/comm")
				ns, _ := os.Readlink("/proc/" + p + "/ns/pid")
				if string(comm) != "sleep\n" || ns != rd.ns {
					t.Fatalf("peer_pid %s is %q in %s, want sleep in %s", p, comm, ns, rd.ns)
				}
			})
		})
	}
}

// TestStatusEndings: the namespace backend's other ways to end, and what
// the peer asked for that the sandbox refused.
func TestStatusEndings(t *testing.T) {
	b := get("namespace")
	t.Run("egress refused", func(t *testing.T) {
		script := `for i in 1 2 3; do wget -q -O /dev/null http://blocked.example/ 2>/dev/null; done; exit 0`
		r, lines := statusRun(t, b, []string{"--allow-host", "allowed.example", "--eof", "wait"}, "", "sh", "-c", script)
		end := endOf(t, lines)
		if r.code != 0 || events(lines) != "start refused:egress refused:egress end" || end["reason"] != "peer-exit" {
			t.Fatalf("exit %d, stream %q, end %v (stderr %q)", r.code, events(lines), end, r.stderr)
		}
		if lines[1]["host"] != "blocked.example:80" || lines[2]["count"].(float64) != 3 {
			t.Fatalf("refused lines %v, %v", lines[1], lines[2])
		}
		// Who asked: the client holding the proxy connection, by its
		// host pid (gone by now, so only its shape is checked).
		if pid, _ := lines[1]["pid"].(float64); pid < 2 || lines[1]["comm"] != "wget" {
			t.Fatalf("the refusal names no client: %v", lines[1])
		}
		if !strings.Contains(r.stderr, "loki-supervise: refused: 3 egress requests: blocked.example:80 (3)\n") {
			t.Fatalf("no summary line: %q", r.stderr)
		}
		r, _ = statusRun(t, b, []string{"--allow-host", "allowed.example", "--eof", "wait", "--quiet"}, "", "sh", "-c", script)
		if strings.Contains(r.stderr, "refused: 3") {
			t.Fatalf("--quiet printed the summary: %q", r.stderr)
		}
	})
	t.Run("missing command", func(t *testing.T) {
		r, lines := statusRun(t, b, nil, "", "no-such-agent-h34")
		if end := endOf(t, lines); r.code != 125 || events(lines) != "end" || end["reason"] != "refused-start" {
			t.Fatalf("exit %d, stream %q, end %v", r.code, events(lines), end)
		}
	})
	t.Run("supervisor signal", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "status.jsonl")
		cmd, _, _ := startReady(t, b, []string{"--status-file", path}, "exec sleep 1000")
		cmd.Process.Signal(syscall.SIGTERM)
		code := testutil.WaitExit(t, cmd, generous)
		end := endOf(t, streamOf(t, path))
		if int(end["code"].(float64)) != code || end["reason"] != "supervisor-signal" || end["signal"].(float64) != 15 {
			t.Fatalf("exit %d, end %v", code, end)
		}
	})
	t.Run("lease expired", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "status.jsonl")
		cmd, _, _ := startReady(t, b, []string{"--status-file", path, "--lease-duration", "1s", "--renew-interval", "200ms", "--no-parent-death-signal"}, "exec sleep 1000")
		cmd.Process.Signal(syscall.SIGSTOP)
		time.Sleep(2500 * time.Millisecond) // the lease bound is what is tested: past it
		cmd.Process.Signal(syscall.SIGCONT)
		code := testutil.WaitExit(t, cmd, generous)
		if end := endOf(t, streamOf(t, path)); code != 124 || end["reason"] != "lease-expired" {
			t.Fatalf("exit %d, end %v", code, end)
		}
	})
	t.Run("supervisor kill -9 leaves start and no end", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "status.jsonl")
		root := privateDir(t, t.TempDir(), "ctl", 0)
		cmd, _, _ := startReady(t, b, []string{"--status-file", path, "--lease-duration", "1s", "--renew-interval", "200ms", "--control-root", root}, "exec sleep 1000")
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Process.Wait()
		if got := events(streamOf(t, path)); got != "start" {
			t.Fatalf("stream after kill -9: %q, want start alone", got)
		}
	})
	t.Run("status fd", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		cmd := supervise(t, b, []string{"--status-fd", "3"}, "sh", "-c", "exit 4")
		cmd.ExtraFiles = []*os.File{pw}
		r := run(t, cmd, "", generous)
		pw.Close()
		var buf [1 << 16]byte
		n, _ := pr.Read(buf[:])
		lines, err := statustest.Lines(buf[:n])
		if err != nil || r.code != 4 || events(lines) != "start end" {
			t.Fatalf("exit %d, stream %q (%v): %s", r.code, events(lines), err, buf[:n])
		}
	})
	t.Run("status fd closed by its reader", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		pr.Close()
		cmd := supervise(t, b, []string{"--status-fd", "3"}, "sh", "-c", "echo out; exit 5")
		cmd.ExtraFiles = []*os.File{pw}
		r := run(t, cmd, "", generous)
		pw.Close()
		if r.code != 5 || r.stdout != "out\n" {
			t.Fatalf("exit %d, stdout %q, stderr %q: a closed status reader changed the session", r.code, r.stdout, r.stderr)
		}
	})
}
