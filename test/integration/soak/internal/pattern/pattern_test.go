package pattern

import (
	"bytes"
	"io"
	"testing"
)

// TestChunkingDoesNotChangeTheStream: reads of any size yield the same
// bytes, so the peer and the test may use different buffer sizes.
func TestChunkingDoesNotChangeTheStream(t *testing.T) {
	want := make([]byte, 4096)
	New(7).Read(want)
	for _, chunk := range []int{1, 3, 7, 8, 9, 100, 4095} {
		got := make([]byte, 0, len(want))
		r := New(7)
		buf := make([]byte, chunk)
		for len(got) < len(want) {
			n, _ := r.Read(buf[:min(chunk, len(want)-len(got))])
			got = append(got, buf[:n]...)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("chunk %d: stream differs", chunk)
		}
	}
}

func TestSeedsDiffer(t *testing.T) {
	a, b := make([]byte, 8), make([]byte, 8)
	io.ReadFull(New(1), a)
	io.ReadFull(New(2), b)
	if bytes.Equal(a, b) {
		t.Fatal("seeds 1 and 2 start with the same word")
	}
}
