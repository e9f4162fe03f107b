package router

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"mime/multipart"
	"net/textproto"
	"strings"
)

// openAIListen buffers the turn and posts it to /audio/transcriptions at
// Final (the endpoint is not streaming, so there are no partials).
type openAIListen struct {
	p    *openAI
	lang string
	pcm  []int16
}

func (p *openAI) startListen(_ context.Context, req ListenRequest) (listenStream, error) {
	if req.KeywordSpotting {
		return nil, perr(KindRejected, "keyword spotting is not offered by openai transcriptions")
	}
	lang := req.Language
	if lang == "" {
		lang = p.cfg.Language
	}
	return &openAIListen{p: p, lang: lang}, nil
}

func (s *openAIListen) write(frame []int16) error {
	s.pcm = append(s.pcm, frame...)
	return nil
}

func (s *openAIListen) partial() string { return "" }

func (s *openAIListen) close() { s.pcm = nil }

type transcription struct {
	Text *string `json:"text"`
}

func (s *openAIListen) final(ctx context.Context, c *call) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("model", s.p.cfg.Model)
	_ = mw.WriteField("response_format", "json")
	if s.lang != "" {
		_ = mw.WriteField("language", s.lang)
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="turn.wav"`)
	h.Set("Content-Type", "audio/wav")
	fw, err := mw.CreatePart(h)
	if err != nil {
		return "", &ProviderError{Kind: KindInternal, Err: err}
	}
	writeWAV(fw, s.pcm, 16000)
	if err := mw.Close(); err != nil {
		return "", &ProviderError{Kind: KindInternal, Err: err}
	}
	req, err := s.p.newRequest(ctx, "/audio/transcriptions", mw.FormDataContentType(), &body, c)
	if err != nil {
		return "", err
	}
	resp, err := do(ctx, s.p.env.client, req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "", httpFailure(resp, s.p.env.maxBody, s.p.env.clock.Now())
	}
	var t transcription
	if err := decodeJSON(resp, s.p.env.maxBody, &t); err != nil {
		return "", err
	}
	if t.Text == nil {
		return "", perr(KindProtocol, "transcription without text")
	}
	if !c.first() {
		return "", errAbandoned
	}
	return strings.TrimSpace(*t.Text), nil
}

// writeWAV writes a mono 16-bit PCM WAV file.
func writeWAV(w io.Writer, pcm []int16, rate int) {
	var hdr [44]byte
	n := uint32(len(pcm) * 2)
	copy(hdr[0:], "RIFF")
	binary.LittleEndian.PutUint32(hdr[4:], 36+n)
	copy(hdr[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(hdr[16:], 16)
	binary.LittleEndian.PutUint16(hdr[20:], 1)
	binary.LittleEndian.PutUint16(hdr[22:], 1)
	binary.LittleEndian.PutUint32(hdr[24:], uint32(rate))
	binary.LittleEndian.PutUint32(hdr[28:], uint32(rate*2))
	binary.LittleEndian.PutUint16(hdr[32:], 2)
	binary.LittleEndian.PutUint16(hdr[34:], 16)
	copy(hdr[36:], "data")
	binary.LittleEndian.PutUint32(hdr[40:], n)
	_, _ = w.Write(hdr[:])
	buf := make([]byte, 2*len(pcm))
	for i, v := range pcm {
		binary.LittleEndian.PutUint16(buf[2*i:], uint16(v))
	}
	_, _ = w.Write(buf)
}
