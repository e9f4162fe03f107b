package router

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-audio/wav"
)

// oggPage appends one Ogg page holding pkts (each laced whole).
func oggPage(b *bytes.Buffer, serial, seq uint32, pkts ...[]byte) {
	var segs []byte
	var body []byte
	for _, p := range pkts {
		n := len(p)
		for n >= 255 {
			segs = append(segs, 255)
			n -= 255
		}
		segs = append(segs, byte(n))
		body = append(body, p...)
	}
	b.WriteString("OggS")
	b.WriteByte(0)
	b.WriteByte(0)
	binary.Write(b, binary.LittleEndian, uint64(0))
	binary.Write(b, binary.LittleEndian, serial)
	binary.Write(b, binary.LittleEndian, seq)
	binary.Write(b, binary.LittleEndian, uint32(0)) // CRC is not checked by the reader
	b.WriteByte(byte(len(segs)))
	b.Write(segs)
	b.Write(body)
}

func speechServer(t *testing.T, check func(req speechRequest), write func(w http.ResponseWriter)) string {
	s, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/audio/speech" {
			http.NotFound(w, r)
			return
		}
		var req speechRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		check(req)
		write(w)
	})
	return s.URL + "/v1"
}

func speakConfig(url, format string) Config {
	m := openAIModel("tts", url)
	m.AudioFormat, m.Voice = format, "nova"
	c := textConfig(m)
	c.Slots = map[string][]string{SlotSpeak: {"tts"}, SlotListen: {"tts"}}
	c.Retry.MaxRetries = 0 // faults here are not retryable; keep the fake clock out
	return c
}

func TestSpeechOpusPassedThroughUntouched(t *testing.T) {
	big := bytes.Repeat([]byte{0xAB}, 700) // spans several lacing values
	pkts := [][]byte{{0xFC, 1, 2, 3}, big, {0x78, 9}}
	url := speechServer(t, func(req speechRequest) {
		if req.ResponseFormat != "opus" || req.Voice != "nova" || req.Input != "hello" {
			t.Errorf("request %+v", req)
		}
	}, func(w http.ResponseWriter) {
		var b bytes.Buffer
		oggPage(&b, 7, 0, append([]byte("OpusHead"), 1, 1, 0, 0, 0x80, 0xbb, 0, 0, 0, 0, 0))
		oggPage(&b, 7, 1, []byte("OpusTags\x00\x00\x00\x00\x00\x00\x00\x00"))
		oggPage(&b, 7, 2, pkts[0], pkts[1])
		oggPage(&b, 9, 0, []byte("other stream")) // not ours: ignored
		oggPage(&b, 7, 3, pkts[2])
		w.Header().Set("Content-Type", "audio/ogg")
		w.Write(b.Bytes())
	})
	r, _, _ := testRouter(t, speakConfig(url, "opus"), nil)
	var got [][]byte
	res, err := r.Speak(tctx(t), SpeakRequest{Text: "hello"}, func(c AudioChunk) error {
		if c.Codec != CodecOpus || c.SampleRate != 48000 {
			t.Errorf("chunk %v %d", c.Codec, c.SampleRate)
		}
		got = append(got, bytes.Clone(c.Opus))
		return nil
	})
	if err != nil || res.Model != "tts" {
		t.Fatalf("%+v %v", res, err)
	}
	if len(got) != 3 || !bytes.Equal(got[0], pkts[0]) || !bytes.Equal(got[1], pkts[1]) || !bytes.Equal(got[2], pkts[2]) {
		t.Fatalf("packets changed: got %d packets", len(got))
	}
}

func TestSpeechPCMResampledAndWAV(t *testing.T) {
	// 0.5 s of 24 kHz PCM (OpenAI's pcm format) becomes 0.5 s at 48 kHz and 16 kHz.
	pcm := make([]byte, 2*12000)
	for i := range 12000 {
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(int16(8000*math.Sin(float64(i)*0.05))))
	}
	for _, format := range []string{"pcm", "wav"} {
		url := speechServer(t, func(req speechRequest) {
			if req.ResponseFormat != format {
				t.Errorf("format %q", req.ResponseFormat)
			}
		}, func(w http.ResponseWriter) {
			if format == "wav" {
				w.Header().Set("Content-Type", "audio/wav")
				var b bytes.Buffer
				writeWAV(&b, nil, 24000)
				w.Write(b.Bytes())
			} else {
				w.Header().Set("Content-Type", "audio/pcm")
			}
			for i := 0; i < len(pcm); i += 999 { // odd split: a sample straddles writes
				w.Write(pcm[i:min(i+999, len(pcm))])
				w.(http.Flusher).Flush()
			}
		})
		r, _, _ := testRouter(t, speakConfig(url, format), nil)
		for _, rate := range []int{48000, 16000} {
			n := 0
			_, err := r.Speak(tctx(t), SpeakRequest{Text: "hi", SampleRate: rate}, func(c AudioChunk) error {
				if c.Codec != CodecPCM || c.SampleRate != rate {
					t.Errorf("chunk %v %d", c.Codec, c.SampleRate)
				}
				n += len(c.PCM)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if n != rate/2 {
				t.Errorf("%s -> %d Hz: %d samples, want %d", format, rate, n, rate/2)
			}
		}
	}
}

func TestSpeechFaults(t *testing.T) {
	for name, write := range map[string]func(w http.ResponseWriter){
		"json instead of audio": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"ok":true}`)
		},
		"not ogg": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "audio/ogg")
			fmt.Fprint(w, "RIFF....WAVEfmt ................................")
		},
		"empty": func(w http.ResponseWriter) { w.Header().Set("Content-Type", "audio/ogg") },
	} {
		t.Run(name, func(t *testing.T) {
			url := speechServer(t, func(speechRequest) {}, write)
			r, _, _ := testRouter(t, speakConfig(url, "opus"), nil)
			_, err := r.Speak(tctx(t), SpeakRequest{Text: "hi"}, func(AudioChunk) error { return nil })
			if got := attemptSummary(err); got != "tts:protocol" {
				t.Fatalf("attempts %s (%v)", got, err)
			}
		})
	}
}

func TestTranscriptionMultipartWAV(t *testing.T) {
	var gotSamples int
	var gotModel, gotLang string
	s, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "multipart/form-data" || r.URL.Path != "/v1/audio/transcriptions" {
			http.Error(w, "bad request", 400)
			return
		}
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			data, _ := io.ReadAll(p)
			switch p.FormName() {
			case "model":
				gotModel = string(data)
			case "language":
				gotLang = string(data)
			case "file":
				d := wav.NewDecoder(bytes.NewReader(data))
				buf, err := d.FullPCMBuffer()
				if err != nil || buf.Format.SampleRate != 16000 || buf.Format.NumChannels != 1 {
					http.Error(w, "bad wav", 400)
					return
				}
				gotSamples = len(buf.Data)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"text":" go forward ten meters "}`)
	})
	r, _, _ := testRouter(t, speakConfig(s.URL+"/v1", "pcm"), nil)
	ls, err := r.Listen(tctx(t), ListenRequest{Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	for range 50 {
		if err := ls.Write(make([]int16, 320)); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := ls.Final(tctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Text != "go forward ten meters" || tr.Model != "tts" || gotSamples != 16000 || gotModel != "m-tts" || gotLang != "en" {
		t.Fatalf("transcript %+v; server saw %d samples, model %q, language %q", tr, gotSamples, gotModel, gotLang)
	}
	if _, err := ls.Final(tctx(t)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("second Final: %v", err)
	}
}

func TestListenFailoverReplaysTheWholeTurn(t *testing.T) {
	var hb hits
	a, _ := server(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	var samples int
	b, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		hb.add(r)
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		f, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		data, _ := io.ReadAll(f)
		samples = (len(data) - 44) / 2
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"text":"hello"}`)
	})
	cfg := textConfig(openAIModel("a", a.URL), openAIModel("b", b.URL))
	cfg.Slots[SlotListen] = []string{"a", "b"}
	r, _, _ := testRouter(t, cfg, nil)
	ls, err := r.Listen(tctx(t), ListenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	for range 25 {
		ls.Write(make([]int16, 320))
	}
	tr, err := ls.Final(tctx(t))
	if err != nil || tr.Model != "b" || tr.Text != "hello" {
		t.Fatalf("%+v %v", tr, err)
	}
	if samples != 25*320 || hb.n() != 1 {
		t.Fatalf("b got %d samples (want %d) in %d requests", samples, 25*320, hb.n())
	}
}

func TestListenSkipsOpenBreaker(t *testing.T) {
	b, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"text":"from b"}`)
	})
	cfg := textConfig(openAIModel("a", "http://127.0.0.1:1"), openAIModel("b", b.URL))
	cfg.Slots[SlotListen] = []string{"a", "b"}
	cfg.Breaker.Failures = 1
	r, _, _ := testRouter(t, cfg, nil)
	ok := false
	r.models["a"].breaker.allow(time.Time{})
	r.models["a"].breaker.record(r.clock.Now(), &ok)
	ls, err := r.Listen(tctx(t), ListenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	ls.Write(make([]int16, 320))
	tr, err := ls.Final(tctx(t))
	if err != nil || tr.Model != "b" {
		t.Fatalf("%+v %v", tr, err)
	}
}
