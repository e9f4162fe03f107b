package wavio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// OggInfo is the OpusHead of an Ogg Opus stream.
type OggInfo struct {
	Channels   int
	PreSkip    int
	SampleRate int // input rate recorded by the encoder (informational)
}

// maxOggPackets bounds what ReadOgg keeps (about 40 minutes of 20 ms packets).
const maxOggPackets = 1 << 17

// ReadOgg reads a whole Ogg Opus file of wantChannels channels and returns
// its audio packets, checksums verified (OggReader does the reading).
func ReadOgg(r io.Reader, wantChannels int) ([][]byte, OggInfo, error) {
	rd := NewOggReader(r, true)
	var pkts [][]byte
	for {
		p, err := rd.ReadPacket()
		info, headOK := rd.Head()
		if err != nil && !errors.Is(err, io.EOF) {
			what := fmt.Sprintf("ogg packet %d", len(pkts))
			if !headOK {
				what = fmt.Sprintf("not an Ogg Opus stream (want %d channel(s))", wantChannels)
			}
			if errors.Is(err, ErrInvalid) {
				return nil, info, fmt.Errorf("wavio: %s: %w", what, err)
			}
			return nil, info, fmt.Errorf("wavio: %s: %v: %w", what, err, ErrInvalid)
		}
		if len(pkts) == 0 { // the headers have just been read
			if !headOK {
				return nil, info, fmt.Errorf("wavio: not an Ogg Opus stream (no complete OpusHead, want %d channel(s)): %w", wantChannels, ErrInvalid)
			}
			if info.Channels != wantChannels {
				return nil, info, fmt.Errorf("wavio: Ogg Opus has %d channel(s), want %d: %w", info.Channels, wantChannels, ErrFormat)
			}
		}
		if err != nil { // io.EOF
			return pkts, info, nil
		}
		if len(pkts) >= maxOggPackets {
			return nil, info, fmt.Errorf("wavio: more than %d Ogg packets: %w", maxOggPackets, ErrInvalid)
		}
		pkts = append(pkts, p)
	}
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

// WriteOggFile writes mono Opus packets to path as Ogg Opus, one packet
// per page (OggWriter, serial 1, DefaultPreSkip), the granule positions
// following each packet's own duration.
func WriteOggFile(path string, pkts [][]byte) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("wavio: %w", err)
	}
	bw := bufio.NewWriter(f)
	err = writeOgg(bw, pkts)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func writeOgg(w io.Writer, pkts [][]byte) error {
	o, err := NewOggWriter(w, OggHead{Serial: 1, Channels: 1, PreSkip: DefaultPreSkip, Vendor: "vera-gateway wavio"})
	if err != nil {
		return err
	}
	for i, p := range pkts {
		if err := o.WritePacket(p); err != nil {
			return fmt.Errorf("wavio: ogg packet %d: %w", i, err)
		}
	}
	return o.Close()
}
