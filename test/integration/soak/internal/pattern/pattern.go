// Package pattern generates the soak's deterministic byte streams. The same
// seed always yields the same bytes, and two seeds differ from the first
// word on, so a stream that reaches the wrong session cannot pass for the
// right one. It is fast (a splitmix64 word per 8 bytes) because the soak
// pushes gigabytes through it and the generator must not be what is
// measured.
package pattern

import "encoding/binary"

const gamma = 0x9e3779b97f4a7c15

// Reader is an endless stream of pseudo-random bytes. It never returns an
// error; bound it with io.LimitReader.
type Reader struct {
	seed uint64
	word uint64 // index of the next word to generate
	tail [8]byte
	left int // bytes of tail not yet returned
}

// New returns the stream of seed.
func New(seed uint64) *Reader { return &Reader{seed: seed} }

func (r *Reader) next() uint64 {
	r.word++
	z := r.seed + r.word*gamma
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Read fills p completely.
func (r *Reader) Read(p []byte) (int, error) {
	n := 0
	for r.left > 0 && n < len(p) {
		p[n] = r.tail[8-r.left]
		r.left--
		n++
	}
	for ; len(p)-n >= 8; n += 8 {
		binary.LittleEndian.PutUint64(p[n:], r.next())
	}
	if n < len(p) {
		binary.LittleEndian.PutUint64(r.tail[:], r.next())
		r.left = 8
		for n < len(p) {
			p[n] = r.tail[8-r.left]
			r.left--
			n++
		}
	}
	return n, nil
}
