package wavio

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4/pkg/media/oggreader"
	"github.com/pion/webrtc/v4/pkg/media/oggwriter"
)

// OggInfo is the OpusHead of an Ogg Opus stream.
type OggInfo struct {
	Channels   int
	PreSkip    int
	SampleRate int // input rate recorded by the encoder (informational)
}

// maxOggPackets bounds what ReadOgg keeps (about 40 minutes of 20 ms packets).
const maxOggPackets = 1 << 17

// ReadOgg reads an Ogg Opus stream of wantChannels channels and returns its
// audio pages' payloads. Each page is taken as one Opus packet, which is how
// pion's oggwriter (and so WriteOgg) lays files out.
func ReadOgg(r io.Reader, wantChannels int) ([][]byte, OggInfo, error) {
	rd, head, err := oggreader.NewWith(r)
	if err != nil {
		return nil, OggInfo{}, fmt.Errorf("wavio: not an Ogg Opus stream (want %d channel(s)): %v: %w", wantChannels, err, ErrInvalid)
	}
	info := OggInfo{Channels: int(head.Channels), PreSkip: int(head.PreSkip), SampleRate: int(head.SampleRate)}
	if info.Channels != wantChannels {
		return nil, info, fmt.Errorf("wavio: Ogg Opus has %d channel(s), want %d: %w", info.Channels, wantChannels, ErrFormat)
	}
	var pkts [][]byte
	for {
		payload, ph, err := rd.ParseNextPage()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, info, fmt.Errorf("wavio: ogg page %d: %v: %w", len(pkts), err, ErrInvalid)
		}
		if t, ok := ph.HeaderType(payload); ok && (t == oggreader.HeaderOpusTags || t == oggreader.HeaderOpusID) {
			continue
		}
		if len(payload) == 0 {
			continue // e.g. the empty end-of-stream page
		}
		if len(pkts) >= maxOggPackets {
			return nil, info, fmt.Errorf("wavio: more than %d Ogg packets: %w", maxOggPackets, ErrInvalid)
		}
		pkts = append(pkts, append([]byte(nil), payload...))
	}
	return pkts, info, nil
}

// ReadOggFile opens path and calls ReadOgg.
func ReadOggFile(path string, wantChannels int) ([][]byte, OggInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, OggInfo{}, fmt.Errorf("wavio: %w", err)
	}
	defer f.Close()
	p, info, err := ReadOgg(f, wantChannels)
	if err != nil {
		return nil, info, fmt.Errorf("%s: %w", path, err)
	}
	return p, info, nil
}

// WriteOggFile writes mono Opus packets of frameSamples48k samples each (960
// for 20 ms) to path as Ogg Opus at 48 kHz, one packet per page, with the
// end-of-stream flag set (pion patches it on Close for files).
func WriteOggFile(path string, pkts [][]byte, frameSamples48k int) error {
	if frameSamples48k <= 0 {
		return fmt.Errorf("wavio: frame of %d samples: %w", frameSamples48k, ErrFormat)
	}
	w, err := oggwriter.New(path, 48000, 1)
	if err != nil {
		return fmt.Errorf("wavio: create ogg: %w", err)
	}
	for i, p := range pkts {
		pkt := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: uint16(i), Timestamp: uint32(i * frameSamples48k)}, Payload: p}
		if err := w.WriteRTP(pkt); err != nil {
			w.Close()
			return fmt.Errorf("wavio: write ogg packet %d: %w", i, err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("wavio: close ogg: %w", err)
	}
	return nil
}
