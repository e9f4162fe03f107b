package router

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/veraneural/vera-gateway/audio/resample"
	"github.com/veraneural/vera-gateway/audio/wavio"
)

// openAISpeechRate is the sample rate of OpenAI's response_format=pcm.
const openAISpeechRate = 24000

type speechRequest struct {
	Model          string `json:"model"`
	Input          string `json:"input"`
	Voice          string `json:"voice"`
	ResponseFormat string `json:"response_format"`
}

// speak posts /audio/speech and streams the body: Ogg Opus packets are
// passed through untouched; pcm (24 kHz s16le) and wav are resampled to
// the requested rate.
func (p *openAI) speak(ctx context.Context, c *call, req SpeakRequest, emit func(AudioChunk) error) error {
	format := p.cfg.AudioFormat
	if format == "" {
		format = "pcm"
	}
	if format == "opus" && req.PCMOnly {
		format = "pcm"
	}
	voice := req.Voice
	if voice == "" {
		voice = p.cfg.Voice
	}
	if voice == "" {
		voice = "alloy"
	}
	buf, _ := json.Marshal(speechRequest{Model: p.cfg.Model, Input: req.Text, Voice: voice, ResponseFormat: format})
	hr, err := p.newRequest(ctx, "/audio/speech", "application/json", strings.NewReader(string(buf)), c)
	if err != nil {
		return err
	}
	resp, err := do(ctx, p.env.client, hr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return httpFailure(resp, p.env.maxBody, p.env.clock.Now())
	}
	body := &boundedReader{r: resp.Body, n: p.env.maxBody}
	wrap := func(err error) error {
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return context.Cause(ctx)
		case errors.Is(err, errAbandoned):
			return err
		case errors.Is(err, wavio.ErrInvalid):
			return perr(KindProtocol, "speech: %w", err)
		}
		var ce *callbackError
		if errors.As(err, &ce) {
			return err
		}
		var pe *ProviderError
		if errors.As(err, &pe) {
			return err
		}
		return readErr(err, "speech body")
	}
	switch format {
	case "opus":
		if err := wantType(resp, "audio/ogg", "audio/opus", "application/ogg", "application/octet-stream"); err != nil {
			return err
		}
		return wrap(oggPackets(body, func(pkt []byte) error {
			if !c.first() {
				return errAbandoned
			}
			return emit(AudioChunk{Codec: CodecOpus, SampleRate: 48000, Opus: pkt})
		}))
	case "wav":
		if err := wantType(resp, "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave", "application/octet-stream"); err != nil {
			return err
		}
		br := bufio.NewReaderSize(body, 8192)
		rate, err := skipWAVHeader(br)
		if err != nil {
			return wrap(err)
		}
		return wrap(streamPCM(br, rate, req.SampleRate, c, emit))
	default:
		if err := wantType(resp, "audio/", "application/octet-stream"); err != nil {
			return err
		}
		return wrap(streamPCM(body, openAISpeechRate, req.SampleRate, c, emit))
	}
}

// skipWAVHeader reads RIFF chunks up to "data" and returns the sample rate
// of a mono 16-bit PCM stream.
func skipWAVHeader(r *bufio.Reader) (int, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, err
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		return 0, perr(KindProtocol, "speech: wav: not RIFF/WAVE")
	}
	rate := 0
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return 0, err
		}
		id, size := string(ch[0:4]), binary.LittleEndian.Uint32(ch[4:8])
		if id == "data" {
			if rate == 0 {
				return 0, perr(KindProtocol, "speech: wav: data before fmt")
			}
			return rate, nil
		}
		if size > 1<<16 {
			return 0, perr(KindProtocol, "speech: wav: chunk %q of %d bytes", id, size)
		}
		b := make([]byte, size+size%2)
		if _, err := io.ReadFull(r, b); err != nil {
			return 0, err
		}
		if id == "fmt " && size >= 16 {
			if f, chn, bits := binary.LittleEndian.Uint16(b[0:2]), binary.LittleEndian.Uint16(b[2:4]), binary.LittleEndian.Uint16(b[14:16]); f != 1 || chn != 1 || bits != 16 {
				return 0, perr(KindProtocol, "speech: wav: want PCM mono 16-bit, got format %d, %d channels, %d bits", f, chn, bits)
			}
			rate = int(binary.LittleEndian.Uint32(b[4:8]))
		}
	}
}

// streamPCM resamples s16le mono PCM from inRate to outRate as it arrives.
func streamPCM(r io.Reader, inRate, outRate int, c *call, emit func(AudioChunk) error) error {
	rs, err := resample.New(inRate, outRate)
	if err != nil {
		return perr(KindProtocol, "speech: %w", err)
	}
	raw := make([]byte, 8192)
	in := make([]int16, 0, 4096)
	var carry []byte
	var out []int16
	got := false
	for {
		n, rerr := r.Read(raw)
		data := append(carry, raw[:n]...)
		whole := len(data) &^ 1
		in = in[:0]
		for i := 0; i < whole; i += 2 {
			in = append(in, int16(binary.LittleEndian.Uint16(data[i:])))
		}
		carry = append(make([]byte, 0, 1), data[whole:]...)
		out = rs.Write(out[:0], in)
		if errors.Is(rerr, io.EOF) {
			out = rs.Flush(out)
		}
		if len(out) > 0 {
			got = true
			if !c.first() {
				return errAbandoned
			}
			if err := emit(AudioChunk{Codec: CodecPCM, SampleRate: outRate, PCM: out}); err != nil {
				return err
			}
		}
		if errors.Is(rerr, io.EOF) {
			if !got {
				return perr(KindProtocol, "speech: empty audio")
			}
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}
