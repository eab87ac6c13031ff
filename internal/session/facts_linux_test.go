package session

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/pid1/facts"
)

// tell connects to the facts socket in dir as the init would, writes
// lines and closes.
func tell(t *testing.T, dir, lines string) {
	t.Helper()
	c, err := net.Dial("unix", filepath.Join(dir, facts.Socket))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte(lines)); err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// serveSelf is a facts listener in a temp dir that takes this process
// as the init.
func serveSelf(t *testing.T) (*factsListener, string) {
	dir := t.TempDir()
	l := listenFacts(dir, -1)
	if l == nil {
		t.Fatal("no facts listener")
	}
	t.Cleanup(l.close)
	l.serve(os.Getpid, false)
	return l, dir
}

// TestFactsEndedAfterEndLine: the init's end line and its close say it
// is done (the session then stops renewing and removes the control dir
// before the init exits).
func TestFactsEndedAfterEndLine(t *testing.T) {
	l, dir := serveSelf(t)
	tell(t, dir, facts.PeerLine(7)+"\n"+facts.End{Class: facts.Exit, Code: 3, Out: 0, In: 0}.Line()+"\n")
	select {
	case <-l.ended():
	case <-time.After(10 * time.Second):
		t.Fatal("end line and close not seen as the init's end")
	}
	if f := l.snapshot(); !f.Ended || f.End.Code != 3 {
		t.Fatalf("told %+v, want the end with code 3", f.Told)
	}
}

// TestFactsEndedNeedsEndLine: a connection closed without an end line
// (an init that stopped talking but still runs) is not the end: its
// lease must go on being renewed.
func TestFactsEndedNeedsEndLine(t *testing.T) {
	l, dir := serveSelf(t)
	tell(t, dir, facts.PeerLine(7)+"\n")
	select {
	case <-l.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the reader did not end at EOF")
	}
	select {
	case <-l.ended():
		t.Fatal("ended without an end line")
	default:
	}
	if (*factsListener)(nil).ended() != nil {
		t.Fatal("nil listener: ended must never fire")
	}
}
