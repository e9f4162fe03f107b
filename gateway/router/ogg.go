package router

import (
	"errors"
	"io"

	"github.com/veraneural/vera-gateway/audio/wavio"
)

// oggPackets passes each audio packet of an Ogg Opus stream to emit,
// exactly as stored, as the body arrives (wavio.OggReader splits and
// rejoins the provider's pages and skips the header packets and other
// logical streams). A malformed stream is an error wrapping
// wavio.ErrInvalid; page checksums are not verified (the transport has its
// own); read errors are returned as they are.
func oggPackets(r io.Reader, emit func(pkt []byte) error) error {
	rd := wavio.NewOggReader(r, false)
	for {
		pkt, err := rd.ReadPacket()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := emit(pkt); err != nil {
			return err
		}
	}
}
