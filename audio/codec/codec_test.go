package codec

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/audio/wavio"
)

func loadSpeech(t testing.TB, rate int) []int16 {
	t.Helper()
	name := map[int]string{16000: "speech_en.16k.wav", 48000: "speech_en.48k.wav"}[rate]
	pcm, err := wavio.ReadWAVFile("../../testdata/audio/"+name, rate)
	if err != nil {
		t.Fatal(err)
	}
	return pcm
}

// encodeAll encodes 48 kHz speech into 20 ms packets.
func encodeAll(t testing.TB, cfg Config, pcm []int16) [][]byte {
	t.Helper()
	enc, err := NewEncoder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var pkts [][]byte
	f := enc.FrameSamples()
	for i := 0; i+f <= len(pcm); i += f {
		p, err := enc.EncodeAppend(nil, pcm[i:i+f])
		if err != nil {
			t.Fatal(err)
		}
		pkts = append(pkts, p)
	}
	return pkts
}

// bestCorr returns the maximal normalised cross-correlation of a against b
// shifted by 0..maxLag samples (codec delay).
func bestCorr(a, b []int16, maxLag int) float64 {
	best := -1.0
	for lag := 0; lag <= maxLag; lag++ {
		var ab, aa, bb float64
		for i := 0; i+lag < len(a) && i < len(b); i++ {
			x, y := float64(a[i+lag]), float64(b[i])
			ab += x * y
			aa += x * x
			bb += y * y
		}
		if aa > 0 && bb > 0 {
			if c := ab / math.Sqrt(aa*bb); c > best {
				best = c
			}
		}
	}
	return best
}

func TestRoundTrip48kTo16k(t *testing.T) {
	cfg := DefaultConfig()
	pkts := encodeAll(t, cfg, loadSpeech(t, 48000))
	dec, err := NewDecoder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if dec.FrameSamples() != 320 || dec.Rate() != 16000 {
		t.Fatalf("frame %d rate %d", dec.FrameSamples(), dec.Rate())
	}
	out := make([]int16, 0, len(pkts)*320)
	frame := make([]int16, 320)
	for _, p := range pkts {
		if err := dec.DecodeFrame(p, frame); err != nil {
			t.Fatal(err)
		}
		out = append(out, frame...)
	}
	ref := loadSpeech(t, 16000)
	if c := bestCorr(out, ref[:len(out)], 320); c < 0.8 {
		t.Fatalf("decoded speech correlates %.2f with the source, want >= 0.8", c)
	}
}

func TestDecode48k(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DecodeRate = 48000
	pkts := encodeAll(t, cfg, loadSpeech(t, 48000))
	dec, err := NewDecoder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]int16, dec.FrameSamples())
	if len(frame) != 960 {
		t.Fatalf("48k frame %d", len(frame))
	}
	if err := dec.DecodeFrame(pkts[10], frame); err != nil {
		t.Fatal(err)
	}
	if err := dec.ConcealFrame(frame); err != nil {
		t.Fatal(err)
	}
}

func TestFECAndPLC(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PacketLossPercent = 20
	speech := loadSpeech(t, 48000)
	withFEC := encodeAll(t, cfg, speech)
	cfg.FEC = false
	noFEC := encodeAll(t, cfg, speech)
	count := func(pk [][]byte) int {
		n := 0
		for _, p := range pk {
			if HasFEC(p) {
				n++
			}
		}
		return n
	}
	if n := count(noFEC); n != 0 {
		t.Fatalf("%d packets claim FEC with FEC off", n)
	}
	if n := count(withFEC); n < len(withFEC)/3 {
		t.Fatalf("only %d of %d speech packets carry FEC", n, len(withFEC))
	}

	// Drop every 5th packet; recover from the next packet's FEC. The recovered
	// audio must track the loss-free decode better than plain concealment.
	ref := decodeAllFrames(t, withFEC, -1, false)
	fec := decodeAllFrames(t, withFEC, 5, true)
	plc := decodeAllFrames(t, withFEC, 5, false)
	var cf, cp float64
	var n int
	for i := 5; i < len(withFEC)-1; i += 5 {
		if !HasFEC(withFEC[i+1]) {
			continue
		}
		cf += bestCorr(fec[i*320:(i+1)*320], ref[i*320:(i+1)*320], 0)
		cp += bestCorr(plc[i*320:(i+1)*320], ref[i*320:(i+1)*320], 0)
		n++
	}
	if n == 0 {
		t.Fatal("no lost packet had FEC in its successor")
	}
	if cf/float64(n) <= cp/float64(n) {
		t.Fatalf("FEC recovery corr %.2f not better than PLC %.2f", cf/float64(n), cp/float64(n))
	}
}

func decodeAllFrames(t *testing.T, pkts [][]byte, lossEvery int, useFEC bool) []int16 {
	t.Helper()
	dec, err := NewDecoder(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int16, len(pkts)*320)
	for i, p := range pkts {
		fr := out[i*320 : (i+1)*320]
		switch {
		case lossEvery > 0 && i > 0 && i%lossEvery == 0 && useFEC && i+1 < len(pkts):
			err = dec.RecoverFrame(pkts[i+1], fr)
		case lossEvery > 0 && i > 0 && i%lossEvery == 0:
			err = dec.ConcealFrame(fr)
		default:
			err = dec.DecodeFrame(p, fr)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestBadPackets(t *testing.T) {
	dec, err := NewDecoder(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	fr := make([]int16, 320)
	if err := dec.DecodeFrame(nil, fr); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: %v", err)
	}
	if err := dec.DecodeFrame(make([]byte, MaxPacketBytes+1), fr); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized: %v", err)
	}
	// Code-3 packet claiming 48 frames of 20 ms (960 ms): invalid.
	if err := dec.DecodeFrame([]byte{0x0b, 0x30, 1, 2, 3}, fr); !errors.Is(err, ErrCorrupt) {
		t.Errorf("bad count: %v", err)
	}
	// A 60 ms packet (code 3, three 20 ms frames) is not one 20 ms frame.
	if err := dec.DecodeFrame([]byte{0x0b | 3<<3, 0x03, 0xff, 0xfe}, fr); err == nil {
		t.Errorf("60 ms packet accepted as one frame")
	}
	if err := dec.DecodeFrame([]byte{0x08}, make([]int16, 100)); !errors.Is(err, ErrBufferSize) {
		t.Errorf("short pcm: %v", err)
	}
	if err := dec.ConcealFrame(make([]int16, 5760)); !errors.Is(err, ErrBufferSize) {
		t.Errorf("oversized plc buffer: %v", err)
	}
	if err := dec.RecoverFrame(nil, fr); !errors.Is(err, ErrEmpty) {
		t.Errorf("fec empty: %v", err)
	}
	// The decoder stays usable after errors.
	if err := dec.ConcealFrame(fr); err != nil {
		t.Fatal(err)
	}
}

func TestEncoderErrors(t *testing.T) {
	enc, err := NewEncoder(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc.Encode(make([]int16, 100), make([]byte, 100)); !errors.Is(err, ErrBufferSize) {
		t.Errorf("short frame: %v", err)
	}
	if _, err := enc.Encode(make([]int16, 960), nil); !errors.Is(err, ErrBufferSize) {
		t.Errorf("no dst: %v", err)
	}
	dtx := DefaultConfig()
	dtx.DTX = true
	e2, err := NewEncoder(dtx)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, MaxPacketBytes)
	var last int
	for range 50 {
		if last, err = e2.Encode(make([]int16, 960), buf); err != nil {
			t.Fatal(err)
		}
	}
	if last > 3 {
		t.Errorf("DTX silence packet is %d bytes, want <= 3", last)
	}
}

func TestConfigValidate(t *testing.T) {
	mut := []struct {
		key string
		f   func(*Config)
	}{
		{"decode_rate", func(c *Config) { c.DecodeRate = 44100 }},
		{"encode_rate", func(c *Config) { c.EncodeRate = 8000 }},
		{"bitrate", func(c *Config) { c.Bitrate = 10 }},
		{"complexity", func(c *Config) { c.Complexity = 11 }},
		{"packet_loss_percent", func(c *Config) { c.PacketLossPercent = -1 }},
		{"max_bandwidth", func(c *Config) { c.MaxBandwidth = "huge" }},
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, m := range mut {
		c := DefaultConfig()
		m.f(&c)
		err := c.Validate()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "audio.codec."+m.key) {
			t.Errorf("%s: %v", m.key, err)
		}
		if _, err := NewDecoder(c); err == nil {
			t.Errorf("%s: NewDecoder accepted invalid config", m.key)
		}
	}
}

func TestHasFECParsesFramings(t *testing.T) {
	cases := []struct {
		pkt  []byte
		want bool
	}{
		{nil, false},
		{[]byte{0x08}, false},
		{[]byte{0x08, 0x40}, true},             // SILK 20 ms, VAD=0, LBRR=1
		{[]byte{0x08, 0x80}, false},            // VAD=1, LBRR=0
		{[]byte{0x80, 0xff}, false},            // CELT-only
		{[]byte{0x0a, 0x01, 0x40}, true},       // code 2, first frame 1 byte
		{[]byte{0x0a, 0x05, 0x40}, false},      // code 2, length past the end
		{[]byte{0x0b, 0x82, 0x01, 0x40}, true}, // code 3 VBR
		{[]byte{0x0b}, false},
	}
	for i, c := range cases {
		if got := HasFEC(c.pkt); got != c.want {
			t.Errorf("case %d %x: got %v", i, c.pkt, got)
		}
	}
}

func FuzzDecode(f *testing.F) {
	cfg := DefaultConfig()
	for _, p := range encodeAll(f, cfg, loadSpeech(f, 48000))[:5] {
		f.Add(p)
	}
	f.Add([]byte{})
	f.Add([]byte{0x0b, 0xff})
	f.Add(make([]byte, 2000))
	dec, err := NewDecoder(cfg)
	if err != nil {
		f.Fatal(err)
	}
	fr := make([]int16, dec.FrameSamples())
	f.Fuzz(func(t *testing.T, pkt []byte) {
		err := dec.DecodeFrame(pkt, fr)
		if err != nil && !errors.Is(err, ErrEmpty) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("unexpected error class: %v", err)
		}
		_ = HasFEC(pkt)
		if err := dec.RecoverFrame(pkt, fr); err != nil && !errors.Is(err, ErrEmpty) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("fec: unexpected error class: %v", err)
		}
		if err := dec.ConcealFrame(fr); err != nil {
			t.Fatalf("plc after bad input: %v", err)
		}
	})
}

func BenchmarkDecode20ms16k(b *testing.B) {
	cfg := DefaultConfig()
	pkts := encodeAll(b, cfg, loadSpeech(b, 48000))
	dec, _ := NewDecoder(cfg)
	fr := make([]int16, dec.FrameSamples())
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := dec.DecodeFrame(pkts[i%len(pkts)], fr); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkConceal20ms16k(b *testing.B) {
	dec, _ := NewDecoder(DefaultConfig())
	fr := make([]int16, dec.FrameSamples())
	b.ReportAllocs()
	for b.Loop() {
		if err := dec.ConcealFrame(fr); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeC5Speech48k(b *testing.B) {
	cfg := DefaultConfig()
	speech := loadSpeech(b, 48000)
	enc, _ := NewEncoder(cfg)
	buf := make([]byte, MaxPacketBytes)
	nf := len(speech) / 960
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := i % nf
		if _, err := enc.Encode(speech[k*960:(k+1)*960], buf); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
