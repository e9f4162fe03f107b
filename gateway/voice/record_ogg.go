package voice

import (
	"bufio"
	"fmt"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/wavio"
)

// Ogg Opus layout written by the recorder (RFC 3533, RFC 7845), through
// wavio.OggWriter:
//
//   - page 0: OpusHead (BOS), page 1: OpusTags, then one Opus packet per
//     page, the layout every reader takes;
//   - mono, 48 kHz granule clock; the granule position of a page is the
//     number of 48 kHz samples of every packet up to and including its own;
//   - time in which no packet was sent or received (a silent sender, lost
//     packets) is kept as 20 ms "no data" packets: a lone TOC byte whose
//     single frame is empty, which RFC 6716 §3.2.1 defines as DTX or a lost
//     frame and decoders conceal. The real packets are written byte for
//     byte;
//   - the last page carries EOS.

const (
	// gapPacket is a code-0, mono, CELT fullband 20 ms TOC with an empty
	// frame: "no audio for 20 ms".
	gapPacket = byte(31<<3 | 0)
	// maxGapFrames bounds the no-data packets written for one gap (60 s);
	// a longer gap is shortened to it.
	maxGapFrames = 3000
	// recordVendor is the OpusTags vendor of recordings.
	recordVendor = "vera-gateway record"
)

// isGapPacket reports whether p is a recorder's "no audio" placeholder.
func isGapPacket(p []byte) bool { return len(p) == 1 && p[0] == gapPacket }

// oggOpus places one direction's packets on the recording's timeline by
// their RTP timestamps and writes them as one mono Ogg Opus stream. It is
// not goroutine-safe (the recording's writer goroutine owns it).
type oggOpus struct {
	w   *bufio.Writer // flushed by the recording
	ogg *wavio.OggWriter

	started bool
	lastTS  uint32 // RTP timestamp of the newest placed packet
	lastPos int64  // its position on the timeline (48 kHz samples)
	end     int64  // timeline position written up to
	closed  bool

	packets, late, bad int64
}

func newOggOpus(w *bufio.Writer, serial uint32) (*oggOpus, error) {
	ogg, err := wavio.NewOggWriter(w, wavio.OggHead{Serial: serial, Channels: 1, PreSkip: wavio.DefaultPreSkip, Vendor: recordVendor})
	if err != nil {
		return nil, fmt.Errorf("voice: record: %w", err)
	}
	return &oggOpus{w: w, ogg: ogg}, nil
}

// write places the Opus packet p sent with RTP timestamp ts (48 kHz). Time
// before it with no packet is filled with gap packets; a packet older than
// what is already written (late or duplicated) is counted and skipped, as a
// file cannot go back in time. Malformed packets are counted and skipped.
func (o *oggOpus) write(ts uint32, p []byte) error {
	if o.closed {
		return nil
	}
	d, err := wavio.OpusSamples(p)
	if err != nil || len(p) > wavio.MaxOggPagePacket {
		o.bad++
		return nil
	}
	pos := int64(0)
	if o.started {
		pos = o.lastPos + int64(int32(ts-o.lastTS))
	}
	if o.started && pos < o.end {
		o.late++
		return nil
	}
	o.started, o.lastTS, o.lastPos = true, ts, pos
	if gap := (pos - o.end) / audio.OpusFrame20; gap > 0 {
		for range min(gap, maxGapFrames) {
			if err := o.ogg.WritePacket([]byte{gapPacket}); err != nil {
				return fmt.Errorf("voice: record: %w", err)
			}
		}
	}
	o.end = pos + int64(d)
	o.packets++
	if err := o.ogg.WritePacket(p); err != nil {
		return fmt.Errorf("voice: record: %w", err)
	}
	return nil
}

// close writes the last page with EOS (or an empty EOS page) and flushes.
func (o *oggOpus) close() error {
	if o.closed {
		return nil
	}
	o.closed = true
	err := o.ogg.Close()
	if err != nil {
		err = fmt.Errorf("voice: record: %w", err)
	}
	if ferr := o.w.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("voice: record: flush ogg: %w", ferr)
	}
	return err
}
