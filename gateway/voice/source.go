package voice

import (
	"io"
	"strings"
	"sync"

	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// speechSource is one reply's synthesised audio, appended sentence by
// sentence while the sender plays it. It remembers which samples carry
// which sentence, so that a barge-in can tell what the person heard.
type speechSource struct {
	onFirst func() // called once, on the sender's goroutine, with the first real frame
	// played is closed when the sender is done with the source (drained or
	// stopped).
	played chan struct{}

	// A pre-encoded phrase (newPhraseSource) plays opus, one packet per
	// PCMFrame samples of buf, and hands each frame's PCM to tap; sources
	// of synthesised reply text leave them nil and are encoded by the
	// Sender. counts, if set, counts frames by kind.
	opus   [][]byte
	tap    func(pcm []int16, ts uint32)
	counts *Metrics

	mu    sync.Mutex // guards the fields below
	buf   []int16
	read  int
	done  bool
	first bool
	marks []mark
}

// mark is the sample span of one spoken sentence.
type mark struct {
	text       string
	start, end int
	// protected: spoken safety resources. They are not reply text (heard
	// leaves them out) and barge-in does not cut them.
	protected bool
	// notice: the spoken AI disclosure. Not reply text either, but the
	// person may talk over it (disclosure.go).
	notice bool
}

// beginSentence records that the samples appended next carry text.
func (s *speechSource) beginSentence(text string, protected bool) {
	s.mu.Lock()
	s.marks = append(s.marks, mark{text: text, start: len(s.buf), end: len(s.buf), protected: protected})
	s.mu.Unlock()
}

// beginNotice records that the samples appended next carry the spoken AI
// disclosure.
func (s *speechSource) beginNotice(text string) {
	s.mu.Lock()
	s.marks = append(s.marks, mark{text: text, start: len(s.buf), end: len(s.buf), notice: true})
	s.mu.Unlock()
}

// protectedAt reports whether sample position played is inside a protected
// sentence, or at the start of one that is about to play.
func (s *speechSource) protectedAt(played int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range s.marks {
		last := i == len(s.marks)-1
		if played < m.end || (last && played == m.end && !s.done) {
			return m.protected && played >= m.start
		}
	}
	return false
}

func (s *speechSource) write(pcm []int16) {
	s.mu.Lock()
	s.buf = append(s.buf, pcm...)
	if n := len(s.marks); n > 0 {
		s.marks[n-1].end = len(s.buf)
	}
	s.mu.Unlock()
}

// finish says no more audio will come: the source ends once drained.
func (s *speechSource) finish() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}

// finished reports whether finish was called.
func (s *speechSource) finished() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// ReadFrame implements rtc.PCMSource.
func (s *speechSource) ReadFrame(dst []int16) (int, error) {
	s.mu.Lock()
	if s.read >= len(s.buf) {
		done := s.done
		s.mu.Unlock()
		if done {
			return 0, io.EOF
		}
		return 0, rtc.ErrUnderrun
	}
	n := copy(dst, s.buf[s.read:])
	s.read += n
	first := !s.first
	s.first = true
	s.mu.Unlock()
	if first && s.onFirst != nil {
		s.onFirst()
	}
	if s.counts != nil {
		s.counts.framesEncoded.Inc()
	}
	return n, nil
}

// NextOpus implements rtc.OpusSource for a pre-encoded phrase: the packet
// of the next frame, which no session encodes.
func (s *speechSource) NextOpus() ([]byte, error) {
	s.mu.Lock()
	i := s.read / rtc.PCMFrame
	if i >= len(s.opus) {
		s.mu.Unlock()
		return nil, io.EOF
	}
	pkt := s.opus[i]
	pcm := s.buf[min(s.read, len(s.buf)):min(s.read+rtc.PCMFrame, len(s.buf))]
	s.read += rtc.PCMFrame
	first := !s.first
	s.first = true
	s.mu.Unlock()
	if first && s.onFirst != nil {
		s.onFirst()
	}
	if s.tap != nil {
		s.tap(pcm, 0)
	}
	if s.counts != nil {
		s.counts.framesCached.Inc()
	}
	return pkt, nil
}

// heard returns the reply text the person heard when played samples of
// the source had gone out: whole sentences before that point, and the share
// of the words of the sentence it was in that had been played. Protected
// sentences (spoken resources) are not reply text and are left out.
func (s *speechSource) heard(played int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, m := range s.marks {
		if played <= m.start {
			break
		}
		if m.protected || m.notice {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if played >= m.end || m.end == m.start {
			b.WriteString(m.text)
			continue
		}
		// Speech time follows the letters more closely than the word
		// count: the words whose letters all fit in the played share.
		words := strings.Fields(m.text)
		total := 0
		for _, w := range words {
			total += len(w) + 1
		}
		budget := total * (played - m.start) / (m.end - m.start)
		k, used := 0, 0
		for k < len(words) && used+len(words[k])+1 <= budget {
			used += len(words[k]) + 1
			k++
		}
		b.WriteString(strings.Join(words[:k], " "))
		break
	}
	return strings.TrimSpace(b.String())
}

// splitSentences moves complete sentences out of pending: text up to and
// including ". ", "! ", "? " or a newline. The rest stays pending until more
// text or the end of the reply arrives.
func splitSentences(pending string) (sentences []string, rest string) {
	start := 0
	for i := 0; i < len(pending); i++ {
		c := pending[i]
		end := -1
		switch {
		case c == '\n':
			end = i
		case (c == '.' || c == '!' || c == '?') && i+1 < len(pending) && (pending[i+1] == ' ' || pending[i+1] == '\n'):
			end = i + 1
		}
		if end < 0 {
			continue
		}
		if s := strings.TrimSpace(pending[start:end]); s != "" {
			sentences = append(sentences, s)
		}
		start = end
	}
	return sentences, pending[start:]
}
