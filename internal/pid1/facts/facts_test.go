package facts

import "testing"

// What the init writes, the host reads back field for field.
func TestRoundTrip(t *testing.T) {
	ends := []End{
		{Class: "peer-signaled", Stage: "supervision", Signal: 9, Out: 12, In: 3},
		{Class: Exit, Code: 0, Out: -1, In: -1},
		{Class: Exit, Code: 3, Out: 0, In: 0},
		{Class: EOFEnded, Out: -1, In: -1},
		{Class: Stopped, Signal: 15, Out: 5, In: 1},
	}
	for _, e := range ends {
		t.Run(e.Line(), func(t *testing.T) {
			got := New()
			got.Parse(PeerLine(8))
			got.Parse(e.Line())
			got.Parse(SayLine("ACP supervisor refused at supervision: peer-signaled by signal 9 (SIGKILL)"))
			want := Told{PeerNS: 8, Ended: true, End: e, Say: "ACP supervisor refused at supervision: peer-signaled by signal 9 (SIGKILL)"}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestParseIgnores(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  Told
	}{
		{"first of each line counts", []string{"peer 8", "peer 9", "end class=exit code=3", "end class=output-held", "say a", "say b"},
			Told{PeerNS: 8, Ended: true, End: End{Class: Exit, Code: 3, Out: -1, In: -1}, Say: "a"}},
		{"junk", []string{"peer x", "peer -2", "hello", "end class=exit signal=-1 out=x in=99999999999999999999"},
			Told{Ended: true, End: End{Class: Exit, Out: -1, In: -1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := New()
			for _, l := range tt.lines {
				got.Parse(l)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
