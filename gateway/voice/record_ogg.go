package voice

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
)

// Ogg Opus layout written by the recorder (RFC 3533, RFC 7845):
//
//   - page 0: OpusHead (BOS), page 1: OpusTags, then one Opus packet per
//     page, the layout pion's oggreader and wavio.ReadOgg expect;
//   - mono, 48 kHz granule clock; the granule position of a page is the
//     number of 48 kHz samples of every packet up to and including its own;
//   - time in which no packet was sent or received (a silent sender, lost
//     packets) is kept as 20 ms "no data" packets: a lone TOC byte whose
//     single frame is empty, which RFC 6716 §3.2.1 defines as DTX or a lost
//     frame and decoders conceal. The real packets are written byte for
//     byte;
//   - the last page carries EOS.

const (
	oggHeaderBytes = 27
	// oggMaxPacket is the largest packet one page holds (255 lacing values).
	oggMaxPacket = 255*255 - 1
	// oggPreSkip is libopus's encoder lookahead at 48 kHz (6.5 ms): what a
	// decoder drops at the start.
	oggPreSkip = 312
	// gapPacket is a code-0, mono, CELT fullband 20 ms TOC with an empty
	// frame: "no audio for 20 ms".
	gapPacket = byte(31<<3 | 0)
	// maxGapFrames bounds the no-data packets written for one gap (60 s);
	// a longer gap is shortened to it.
	maxGapFrames = 3000
)

// errBadOpus: a packet whose TOC does not give a duration.
var errBadOpus = errors.New("voice: record: not an Opus packet")

// isGapPacket reports whether p is a recorder's "no audio" placeholder.
func isGapPacket(p []byte) bool { return len(p) == 1 && p[0] == gapPacket }

var oggCRCTable = func() (t [256]uint32) {
	for i := range t {
		r := uint32(i) << 24
		for range 8 {
			if r&0x80000000 != 0 {
				r = r<<1 ^ 0x04c11db7
			} else {
				r <<= 1
			}
		}
		t[i] = r
	}
	return t
}()

func oggCRC(crc uint32, b []byte) uint32 {
	for _, c := range b {
		crc = crc<<8 ^ oggCRCTable[byte(crc>>24)^c]
	}
	return crc
}

// opusSamples48k is the duration of an Opus packet in 48 kHz samples, from
// its TOC byte (RFC 6716 §3.1).
func opusSamples48k(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, fmt.Errorf("%w: empty", errBadOpus)
	}
	cfg := int(p[0] >> 3)
	var frame int // in 1/400 s units of 120 samples
	switch {
	case cfg < 12: // SILK 10, 20, 40, 60 ms
		frame = []int{480, 960, 1920, 2880}[cfg%4]
	case cfg < 16: // hybrid 10, 20 ms
		frame = []int{480, 960}[cfg%2]
	default: // CELT 2.5, 5, 10, 20 ms
		frame = []int{120, 240, 480, 960}[cfg%4]
	}
	n := 1
	switch p[0] & 3 {
	case 1, 2:
		n = 2
	case 3:
		if len(p) < 2 || p[1]&0x3f == 0 {
			return 0, fmt.Errorf("%w: code 3 without a frame count", errBadOpus)
		}
		n = int(p[1] & 0x3f)
	}
	if d := n * frame; d <= 5760 { // at most 120 ms
		return d, nil
	}
	return 0, fmt.Errorf("%w: longer than 120 ms", errBadOpus)
}

// oggOpus writes one mono Ogg Opus stream. Packets are placed on the
// timeline by their RTP timestamps; it is not goroutine-safe (the
// recording's writer goroutine owns it).
type oggOpus struct {
	w       *bufio.Writer
	serial  uint32
	pageSeq uint32
	granule uint64 // samples written, including gap packets

	started bool
	lastTS  uint32 // RTP timestamp of the newest placed packet
	lastPos int64  // its position on the timeline (48 kHz samples)
	end     int64  // timeline position written up to

	held        []byte // the newest packet page, written on the next packet or at close (EOS)
	heldGranule uint64
	hasHeld     bool
	closed      bool
	page        []byte // reused page buffer

	packets, late, bad int64
}

func newOggOpus(w *bufio.Writer, serial uint32) (*oggOpus, error) {
	o := &oggOpus{w: w, serial: serial}
	head := make([]byte, 19)
	copy(head, "OpusHead")
	head[8] = 1 // version
	head[9] = 1 // channels
	binary.LittleEndian.PutUint16(head[10:], oggPreSkip)
	binary.LittleEndian.PutUint32(head[12:], 48000)
	// output gain 0, mapping family 0
	if err := o.writePage(head, 0, 0x02); err != nil {
		return nil, err
	}
	const vendor = "vera-gateway record"
	tags := make([]byte, 0, 8+4+len(vendor)+4)
	tags = append(tags, "OpusTags"...)
	tags = binary.LittleEndian.AppendUint32(tags, uint32(len(vendor)))
	tags = append(tags, vendor...)
	tags = binary.LittleEndian.AppendUint32(tags, 0)
	if err := o.writePage(tags, 0, 0); err != nil {
		return nil, err
	}
	return o, nil
}

// writePage writes one page holding one packet.
func (o *oggOpus) writePage(p []byte, granule uint64, flags byte) error {
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
		return fmt.Errorf("voice: record: ogg page: %w", err)
	}
	return nil
}

// hold queues a packet page, writing the previously held one.
func (o *oggOpus) hold(p []byte, samples int) error {
	if o.hasHeld {
		if err := o.writePage(o.held, o.heldGranule, 0); err != nil {
			return err
		}
	}
	o.granule += uint64(samples)
	o.held = append(o.held[:0], p...)
	o.heldGranule, o.hasHeld = o.granule, true
	return nil
}

// write places the Opus packet p sent with RTP timestamp ts (48 kHz). Time
// before it with no packet is filled with gap packets; a packet older than
// what is already written (late or duplicated) is counted and skipped, as a
// file cannot go back in time. Malformed packets are counted and skipped.
func (o *oggOpus) write(ts uint32, p []byte) error {
	if o.closed {
		return nil
	}
	d, err := opusSamples48k(p)
	if err != nil || len(p) > oggMaxPacket {
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
	if gap := (pos - o.end) / 960; gap > 0 {
		for range min(gap, maxGapFrames) {
			if err := o.hold([]byte{gapPacket}, 960); err != nil {
				return err
			}
		}
	}
	o.end = pos + int64(d)
	o.packets++
	return o.hold(p, d)
}

// close writes the held page with EOS (or an empty EOS page) and flushes.
func (o *oggOpus) close() error {
	if o.closed {
		return nil
	}
	o.closed = true
	var err error
	if o.hasHeld {
		err = o.writePage(o.held, o.heldGranule, 0x04)
	} else {
		err = o.writePage(nil, 0, 0x04)
	}
	if ferr := o.w.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("voice: record: flush ogg: %w", ferr)
	}
	return err
}
