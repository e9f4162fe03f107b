package wavio

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/veraneural/vera-gateway/audio"
)

// MaxOggPagePacket is the largest packet OggWriter puts on one page (255
// lacing values); Opus packets are far smaller.
const MaxOggPagePacket = 255*255 - 1

// DefaultPreSkip is libopus's encoder lookahead, 6.5 ms at audio.OpusRate:
// what a decoder drops at the start of a stream our encoder wrote.
const DefaultPreSkip = 312

// OggHead describes the stream an OggWriter writes.
type OggHead struct {
	Serial   uint32 // the logical stream's serial number
	Channels int    // 1 or 2
	PreSkip  int    // samples at audio.OpusRate a decoder drops at the start
	// InputRate is the original rate recorded in OpusHead (informational);
	// 0 writes audio.OpusRate.
	InputRate int
	Vendor    string // OpusTags vendor string
}

// OggWriter writes one Ogg Opus logical stream (RFC 7845), one packet per
// page: OpusHead (BOS), OpusTags, then each packet with the granule
// position of its end, and the last page with EOS. A page is held until
// the next packet or Close, so the end-of-stream flag lands on the last
// packet without seeking back; the writer therefore suits a buffered or
// streaming io.Writer. It does not close or flush w. Not goroutine-safe;
// after New the page buffer is reused and WritePacket allocates nothing.
type OggWriter struct {
	w       io.Writer
	serial  uint32
	pageSeq uint32
	granule uint64 // samples written so far at audio.OpusRate

	held        []byte // the newest packet, written on the next one or at Close (EOS)
	heldGranule uint64
	hasHeld     bool
	closed      bool
	page        []byte // reused page buffer
}

// NewOggWriter writes the OpusHead and OpusTags pages of h to w.
func NewOggWriter(w io.Writer, h OggHead) (*OggWriter, error) {
	if h.Channels != 1 && h.Channels != 2 {
		return nil, fmt.Errorf("wavio: ogg writer: %d channels, want 1 or 2: %w", h.Channels, ErrFormat)
	}
	if h.PreSkip < 0 || h.PreSkip > 0xffff || h.InputRate < 0 {
		return nil, fmt.Errorf("wavio: ogg writer: pre-skip %d, input rate %d: %w", h.PreSkip, h.InputRate, ErrFormat)
	}
	if h.InputRate == 0 {
		h.InputRate = audio.OpusRate
	}
	o := &OggWriter{w: w, serial: h.Serial}
	head := make([]byte, 19)
	copy(head, "OpusHead")
	head[8] = 1 // version
	head[9] = byte(h.Channels)
	binary.LittleEndian.PutUint16(head[10:], uint16(h.PreSkip))
	binary.LittleEndian.PutUint32(head[12:], uint32(h.InputRate))
	// output gain 0, mapping family 0
	if err := o.writePage(head, 0, oggFlagBOS); err != nil {
		return nil, err
	}
	tags := make([]byte, 0, 8+4+len(h.Vendor)+4)
	tags = append(tags, "OpusTags"...)
	tags = binary.LittleEndian.AppendUint32(tags, uint32(len(h.Vendor)))
	tags = append(tags, h.Vendor...)
	tags = binary.LittleEndian.AppendUint32(tags, 0) // no user comments
	if err := o.writePage(tags, 0, 0); err != nil {
		return nil, err
	}
	return o, nil
}

// WritePacket adds one Opus packet; its duration (OpusSamples) advances
// the granule position. A packet with no valid duration, or larger than
// MaxOggPagePacket, is an error and is not written.
func (o *OggWriter) WritePacket(p []byte) error {
	if o.closed {
		return fmt.Errorf("wavio: ogg writer closed: %w", ErrInvalid)
	}
	n, err := OpusSamples(p)
	if err != nil {
		return err
	}
	if len(p) > MaxOggPagePacket {
		return fmt.Errorf("wavio: %d-byte packet over %d: %w", len(p), MaxOggPagePacket, ErrOpusPacket)
	}
	if o.hasHeld {
		if err := o.writePage(o.held, o.heldGranule, 0); err != nil {
			return err
		}
	}
	o.granule += uint64(n)
	o.held = append(o.held[:0], p...)
	o.heldGranule, o.hasHeld = o.granule, true
	return nil
}

// Close writes the held packet's page with EOS, or an empty EOS page when
// no packet was written. Later calls do nothing.
func (o *OggWriter) Close() error {
	if o.closed {
		return nil
	}
	o.closed = true
	if o.hasHeld {
		return o.writePage(o.held, o.heldGranule, oggFlagEOS)
	}
	return o.writePage(nil, 0, oggFlagEOS)
}

// writePage writes one page holding one packet.
func (o *OggWriter) writePage(p []byte, granule uint64, flags byte) error {
	lacing := len(p)/255 + 1
	n := oggHeaderBytes + lacing + len(p)
	if cap(o.page) < n {
		o.page = make([]byte, n)
	}
	pg := o.page[:n]
	copy(pg, "OggS")
	pg[4] = 0
	pg[5] = flags
	binary.LittleEndian.PutUint64(pg[6:], granule)
	binary.LittleEndian.PutUint32(pg[14:], o.serial)
	binary.LittleEndian.PutUint32(pg[18:], o.pageSeq)
	binary.LittleEndian.PutUint32(pg[22:], 0)
	pg[26] = byte(lacing)
	for i := range lacing - 1 {
		pg[oggHeaderBytes+i] = 255
	}
	pg[oggHeaderBytes+lacing-1] = byte(len(p) % 255)
	copy(pg[oggHeaderBytes+lacing:], p)
	binary.LittleEndian.PutUint32(pg[22:], oggCRC(0, pg))
	o.pageSeq++
	if _, err := o.w.Write(pg); err != nil {
		return fmt.Errorf("wavio: ogg page: %w", err)
	}
	return nil
}
