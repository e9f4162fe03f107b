package router

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// oggPackets reads an Ogg Opus stream and calls emit with each audio
// packet, exactly as stored (the OpusHead and OpusTags header packets are
// checked and skipped). Only the first logical stream is read.
type oggPackets struct {
	r       *bufio.Reader
	serial  uint32
	started bool
	packet  []byte // packet continued across pages
	headers int    // header packets seen
}

var errOgg = errors.New("ogg: malformed stream")

func newOggPackets(r io.Reader) *oggPackets { return &oggPackets{r: bufio.NewReaderSize(r, 8192)} }

// maxOggPacket bounds one reassembled packet (Opus packets are < 1300 bytes;
// OpusTags may be larger but is bounded here too).
const maxOggPacket = 256 << 10

func (o *oggPackets) run(emit func(pkt []byte) error) error {
	var hdr [27]byte
	for {
		if _, err := io.ReadFull(o.r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				if !o.started {
					return fmt.Errorf("%w: empty", errOgg)
				}
				return nil
			}
			return err
		}
		if string(hdr[0:4]) != "OggS" || hdr[4] != 0 {
			return fmt.Errorf("%w: bad page header", errOgg)
		}
		serial := binary.LittleEndian.Uint32(hdr[14:18])
		if !o.started {
			o.serial, o.started = serial, true
		}
		segs := make([]byte, hdr[26])
		if _, err := io.ReadFull(o.r, segs); err != nil {
			return err
		}
		size := 0
		for _, s := range segs {
			size += int(s)
		}
		body := make([]byte, size)
		if _, err := io.ReadFull(o.r, body); err != nil {
			return err
		}
		if serial != o.serial {
			continue // another logical stream: not ours
		}
		off := 0
		for _, s := range segs {
			o.packet = append(o.packet, body[off:off+int(s)]...)
			off += int(s)
			if len(o.packet) > maxOggPacket {
				return fmt.Errorf("%w: packet over %d bytes", errOgg, maxOggPacket)
			}
			if s == 255 {
				continue // packet continues in the next segment
			}
			pkt := o.packet
			o.packet = nil
			switch {
			case o.headers == 0:
				if !bytes.HasPrefix(pkt, []byte("OpusHead")) {
					return fmt.Errorf("%w: not Ogg Opus (no OpusHead)", errOgg)
				}
				o.headers++
			case o.headers == 1:
				if !bytes.HasPrefix(pkt, []byte("OpusTags")) {
					return fmt.Errorf("%w: no OpusTags", errOgg)
				}
				o.headers++
			default:
				if len(pkt) == 0 {
					continue
				}
				if err := emit(pkt); err != nil {
					return err
				}
			}
		}
	}
}
