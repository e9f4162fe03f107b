package wavio

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Ogg page layout (RFC 3533 §6).
const (
	oggHeaderBytes = 27
	oggFlagBOS     = 0x02
	oggFlagEOS     = 0x04
	// maxOggPacket bounds one reassembled packet: Opus packets are under
	// 1300 bytes; OpusTags may be larger but is bounded here too.
	maxOggPacket = 256 << 10
)

// OggReader reads the packets of the first logical stream of an Ogg Opus
// stream (RFC 7845) as the bytes arrive: each page is split into packets by
// its lacing values, a packet continued across pages is put back together,
// pages of other logical streams are skipped, and the OpusHead and OpusTags
// header packets are checked and kept out of the packet stream. It works on
// any page layout (an encoder's several packets per page as well as the
// recorder's one), so a provider's streamed body can be passed on packet
// by packet. Not goroutine-safe.
type OggReader struct {
	r        *bufio.Reader
	checkCRC bool
	serial   uint32
	started  bool
	headers  int    // header packets seen (OpusHead, OpusTags)
	head     []byte // the OpusHead packet
	partial  []byte // a packet continued from the previous segments
	hdr      [oggHeaderBytes]byte
	segs     []byte // the current page's lacing values
	body     []byte // the current page's payload (reused)
	seg, off int    // next lacing value and its offset in body
	err      error  // sticky: the stream is unusable after an error
}

// NewOggReader reads pages from r. With checkCRC every page's checksum is
// verified (files); without, a damaged page is only caught if its framing
// is (a provider's stream, where the transport has its own checks).
func NewOggReader(r io.Reader, checkCRC bool) *OggReader {
	return &OggReader{r: bufio.NewReaderSize(r, 8192), checkCRC: checkCRC, segs: make([]byte, 0, 255)}
}

// ReadPacket returns the next audio packet; the caller owns it. Empty
// packets are skipped. It returns io.EOF after the last page, an error
// wrapping ErrInvalid for a malformed stream (not Ogg, no OpusHead or
// OpusTags, a bad checksum, a packet over 256 KiB), and an error of the
// underlying reader as it is (io.ErrUnexpectedEOF for a truncated page).
func (o *OggReader) ReadPacket() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	p, err := o.next()
	if err != nil {
		o.err = err
	}
	return p, err
}

func (o *OggReader) next() ([]byte, error) {
	for {
		for o.seg < len(o.segs) {
			s := int(o.segs[o.seg])
			o.seg++
			o.partial = append(o.partial, o.body[o.off:o.off+s]...)
			o.off += s
			if len(o.partial) > maxOggPacket {
				return nil, fmt.Errorf("wavio: ogg packet over %d bytes: %w", maxOggPacket, ErrInvalid)
			}
			if s == 255 {
				continue // the packet goes on in the next segment
			}
			pkt := o.partial
			o.partial = nil
			switch o.headers {
			case 0:
				if !bytes.HasPrefix(pkt, []byte("OpusHead")) {
					return nil, fmt.Errorf("wavio: not Ogg Opus (no OpusHead): %w", ErrInvalid)
				}
				o.head = pkt
				o.headers++
			case 1:
				if !bytes.HasPrefix(pkt, []byte("OpusTags")) {
					return nil, fmt.Errorf("wavio: Ogg Opus without OpusTags: %w", ErrInvalid)
				}
				o.headers++
			default:
				if len(pkt) > 0 {
					return pkt, nil
				}
			}
		}
		if err := o.page(); err != nil {
			return nil, err
		}
	}
}

// page reads the next page of the first logical stream.
func (o *OggReader) page() error {
	for {
		if _, err := io.ReadFull(o.r, o.hdr[:]); err != nil {
			if errors.Is(err, io.EOF) && !o.started {
				return fmt.Errorf("wavio: empty Ogg stream: %w", ErrInvalid)
			}
			return err
		}
		h := o.hdr[:]
		if string(h[0:4]) != "OggS" || h[4] != 0 {
			return fmt.Errorf("wavio: bad Ogg page header: %w", ErrInvalid)
		}
		serial := binary.LittleEndian.Uint32(h[14:18])
		if !o.started {
			o.serial, o.started = serial, true
		}
		o.segs = o.segs[:h[26]]
		if _, err := io.ReadFull(o.r, o.segs); err != nil {
			return err
		}
		size := 0
		for _, s := range o.segs {
			size += int(s)
		}
		if cap(o.body) < size {
			o.body = make([]byte, size)
		}
		o.body = o.body[:size]
		if _, err := io.ReadFull(o.r, o.body); err != nil {
			return err
		}
		if o.checkCRC {
			want := binary.LittleEndian.Uint32(h[22:26])
			binary.LittleEndian.PutUint32(h[22:26], 0)
			if got := oggCRC(oggCRC(oggCRC(0, h), o.segs), o.body); got != want {
				return fmt.Errorf("wavio: Ogg page checksum %08x, want %08x: %w", got, want, ErrInvalid)
			}
		}
		if serial != o.serial {
			continue // another logical stream: not ours
		}
		o.seg, o.off = 0, 0
		return nil
	}
}

// Head is the stream's OpusHead (RFC 7845 §5.1), known once ReadPacket has
// read past the headers; ok is false before that or when the header is
// shorter than the 19 bytes that hold these fields.
func (o *OggReader) Head() (info OggInfo, ok bool) {
	if len(o.head) < 19 {
		return OggInfo{}, false
	}
	return OggInfo{Channels: int(o.head[9]), PreSkip: int(binary.LittleEndian.Uint16(o.head[10:12])),
		SampleRate: int(binary.LittleEndian.Uint32(o.head[12:16]))}, true
}

// oggCRCTable is the Ogg page checksum's table: CRC-32, polynomial
// 0x04c11db7, not reflected, initial value and final xor 0 (RFC 3533 §6).
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
