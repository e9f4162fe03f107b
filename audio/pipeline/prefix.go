package pipeline

import "github.com/veraneural/vera-gateway/audio"

// prefixFrames is the prefix ring's length: 640 ms of 20 ms frames, above
// the turn detector's prefix padding plus its minimum speech.
const prefixFrames = 32

// prefixRing keeps the last frames so a recogniser started at
// SpeechStarted also gets the padding that came before the turn was
// detected.
type prefixRing struct {
	frames [prefixFrames][audio.Frame20]int16
	n      int // frames pushed so far
}

func (r *prefixRing) push(f []int16) {
	copy(r.frames[r.n%len(r.frames)][:], f)
	r.n++
}

// since returns the frames covering the last samples samples (before the
// current frame), oldest first, at most the ring's length.
func (r *prefixRing) since(samples int64) [][]int16 {
	k := int((samples + audio.Frame20 - 1) / audio.Frame20)
	if k > r.n {
		k = r.n
	}
	if k > len(r.frames) {
		k = len(r.frames)
	}
	out := make([][]int16, 0, k)
	for i := r.n - k; i < r.n; i++ {
		out = append(out, r.frames[i%len(r.frames)][:])
	}
	return out
}
