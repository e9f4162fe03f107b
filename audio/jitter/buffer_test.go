package jitter

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/audio/codec"
	"github.com/veraneural/vera-gateway/audio/wavio"
)

// fakeDec marks each output frame: pcm[0] = packet id (last payload byte)+1
// for a decode, -(id+1) for FEC recovery from packet id, -1000 for PLC.
type fakeDec struct{ failNext bool }

func (fakeDec) FrameSamples() int { return 320 }
func (f *fakeDec) DecodeFrame(p []byte, pcm []int16) error {
	if p[0] == 0xff {
		return errors.New("corrupt")
	}
	pcm[0] = int16(p[len(p)-1]) + 1
	return nil
}
func (fakeDec) ConcealFrame(pcm []int16) error { pcm[0] = -1000; return nil }
func (fakeDec) RecoverFrame(p []byte, pcm []int16) error {
	pcm[0] = -(int16(p[len(p)-1]) + 1)
	return nil
}

func pkt(id byte, fec bool) []byte {
	if fec {
		return []byte{0x08, 0x40, id}
	}
	return []byte{0x08, 0x00, id}
}

func newFixed(t *testing.T, targetMs int) *Buffer {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Adaptive = false
	cfg.TargetDelayMs = targetMs
	b, err := New(cfg, &fakeDec{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pullIDs pulls n frames and returns pcm[0] of each and the kinds.
func pullIDs(t *testing.T, b *Buffer, n int) ([]int16, []FrameKind) {
	t.Helper()
	pcm := make([]int16, 320)
	var ids []int16
	var kinds []FrameKind
	for range n {
		pcm[0] = 0
		k, err := b.Pull(pcm)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, pcm[0])
		kinds = append(kinds, k)
	}
	return ids, kinds
}

func TestInOrderWaitsForTarget(t *testing.T) {
	b := newFixed(t, 60)
	ids, kinds := pullIDs(t, b, 1)
	if kinds[0] != Silence || ids[0] != 0 {
		t.Fatalf("before any packet: %v %v", kinds, ids)
	}
	for i := range 2 {
		b.Push(uint16(i), uint32(i*960), pkt(byte(i), false), int64(i*960))
	}
	if _, kinds = pullIDs(t, b, 1); kinds[0] != Silence {
		t.Fatalf("played with 40 ms buffered under a 60 ms target: %v", kinds)
	}
	b.Push(2, 2*960, pkt(2, false), 2*960)
	ids, kinds = pullIDs(t, b, 3)
	for i := range 3 {
		if kinds[i] != Decoded || ids[i] != int16(i)+1 {
			t.Fatalf("frame %d: %v id %d", i, kinds[i], ids[i])
		}
	}
}

func TestReorderDuplicateLate(t *testing.T) {
	b := newFixed(t, 60)
	for _, i := range []int{0, 2, 1, 1, 3, 4} {
		b.Push(uint16(i), uint32(i*960), pkt(byte(i), false), 0)
	}
	ids, kinds := pullIDs(t, b, 5)
	for i := range 5 {
		if kinds[i] != Decoded || ids[i] != int16(i)+1 {
			t.Fatalf("frame %d: %v id %d", i, kinds[i], ids[i])
		}
	}
	b.Push(2, 2*960, pkt(2, false), 0) // long played
	st := b.Stats()
	if st.Reordered != 1 || st.Duplicates != 1 || st.Late != 1 || st.Decoded != 5 || st.Lost != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestFirstPacketsOutOfOrder(t *testing.T) {
	b := newFixed(t, 40)
	b.Push(11, 11*960, pkt(11, false), 0)
	b.Push(10, 10*960, pkt(10, false), 0)
	ids, _ := pullIDs(t, b, 2)
	if ids[0] != 11 || ids[1] != 12 {
		t.Fatalf("ids %v", ids)
	}
}

func TestLossFECAndPLC(t *testing.T) {
	b := newFixed(t, 60)
	// 3 is lost and 4 carries FEC; 7 is lost and 8 has none.
	for _, i := range []int{0, 1, 2, 4, 5, 6, 8, 9, 10} {
		b.Push(uint16(i), uint32(i*960), pkt(byte(i), i == 4), 0)
	}
	ids, kinds := pullIDs(t, b, 10)
	want := []int16{1, 2, 3, -5, 5, 6, 7, -1000, 9, 10}
	wantK := []FrameKind{Decoded, Decoded, Decoded, Recovered, Decoded, Decoded, Decoded, Concealed, Decoded, Decoded}
	for i := range want {
		if ids[i] != want[i] || kinds[i] != wantK[i] {
			t.Fatalf("frame %d: id %d kind %v, want %d %v", i, ids[i], kinds[i], want[i], wantK[i])
		}
	}
	st := b.Stats()
	if st.Lost != 2 || st.Recovered != 1 || st.Concealed != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestWrapAround(t *testing.T) {
	b := newFixed(t, 40)
	seq0, ts0 := uint16(65533), uint32(1<<32-2*960)
	n := 8
	pcm := make([]int16, 320)
	got := 0
	for i := range n {
		b.Push(seq0+uint16(i), ts0+uint32(i*960), pkt(byte(i), false), int64(i*960))
		if i >= 1 {
			k, err := b.Pull(pcm)
			if err != nil {
				t.Fatal(err)
			}
			if k == Decoded {
				if pcm[0] != int16(got)+1 {
					t.Fatalf("after wrap got id %d want %d", pcm[0], got+1)
				}
				got++
			}
		}
	}
	st := b.Stats()
	if st.Lost != 0 || st.Late != 0 || st.Resets != 0 || got < n-2 {
		t.Fatalf("wrap: decoded %d, stats %+v", got, st)
	}
}

func TestDTXGapIsNotLoss(t *testing.T) {
	b := newFixed(t, 40)
	pcm := make([]int16, 320)
	b.Push(0, 0, pkt(0, false), 0)
	b.Push(1, 960, pkt(1, false), 960)
	pullIDs(t, b, 2)
	// Sender goes quiet for 1 s (DTX) then resumes with seq 2 at ts +1 s.
	for range 50 {
		if _, err := b.Pull(pcm); err != nil {
			t.Fatal(err)
		}
	}
	b.Push(2, 960+48000, pkt(2, false), 48000)
	b.Push(3, 960+48000+960, pkt(3, false), 48960)
	ids, kinds := pullIDs(t, b, 2)
	if ids[0] != 3 || ids[1] != 4 || kinds[1] != Decoded {
		t.Fatalf("after DTX: %v %v", ids, kinds)
	}
	st := b.Stats()
	if st.Lost != 0 || st.Late != 0 || st.Concealed != 5 {
		t.Fatalf("DTX stats %+v (want 0 lost, 5 PLC frames before silence)", st)
	}
}

func TestWildJumpResets(t *testing.T) {
	b := newFixed(t, 20)
	b.Push(100, 0, pkt(1, false), 0)
	pullIDs(t, b, 1)
	b.Push(30000, 123456789, pkt(2, false), 0)
	ids, _ := pullIDs(t, b, 1)
	if ids[0] != 3 || b.Stats().Resets != 1 {
		t.Fatalf("after jump id %d stats %+v", ids[0], b.Stats())
	}
}

func TestSpanBounded(t *testing.T) {
	b := newFixed(t, 20)
	for i := range 40 { // 800 ms at once > 300 ms max
		b.Push(uint16(i), uint32(i*960), pkt(byte(i), false), 0)
	}
	ids, _ := pullIDs(t, b, 1)
	st := b.Stats()
	if st.Dropped == 0 || ids[0] <= 1 {
		t.Fatalf("no drop: id %d %+v", ids[0], st)
	}
	if span := 40 - int(ids[0]) + 1; span*20 > 300 {
		t.Fatalf("span after drop %d ms", span*20)
	}
}

func TestCorruptAndBadInput(t *testing.T) {
	b := newFixed(t, 20)
	if err := b.Push(0, 0, nil, 0); !errors.Is(err, ErrBadPacket) {
		t.Fatalf("empty: %v", err)
	}
	if err := b.Push(0, 0, make([]byte, codec.MaxPacketBytes+1), 0); !errors.Is(err, ErrBadPacket) {
		t.Fatalf("huge: %v", err)
	}
	b.Push(0, 0, pkt(0, false), 0)
	b.Push(1, 960, []byte{0xff, 1}, 0)
	b.Push(2, 1920, pkt(2, false), 0)
	_, kinds := pullIDs(t, b, 3)
	if kinds[0] != Decoded || kinds[1] != Concealed || kinds[2] != Decoded {
		t.Fatalf("kinds %v", kinds)
	}
	if _, err := b.Pull(make([]int16, 10)); !errors.Is(err, ErrBufferSize) {
		t.Fatalf("short pcm: %v", err)
	}
	if st := b.Stats(); st.Corrupt != 3 {
		t.Fatalf("corrupt %d", st.Corrupt)
	}
}

func TestAdaptiveTarget(t *testing.T) {
	b, err := New(DefaultConfig(), &fakeDec{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		jit := int64(r.IntN(48 * 80)) // up to 80 ms of arrival jitter
		b.Push(uint16(i), uint32(i*960), pkt(byte(i), false), int64(i*960)+jit)
	}
	st := b.Stats()
	if st.JitterMs < 10 || st.TargetDelayMs <= 60 || st.TargetDelayMs > 300 {
		t.Fatalf("adaptive: %+v", st)
	}
	b2, _ := New(DefaultConfig(), &fakeDec{})
	for i := range 200 {
		b2.Push(uint16(i), uint32(i*960), pkt(byte(i), false), int64(i*960))
	}
	if st := b2.Stats(); st.TargetDelayMs != 20 {
		t.Fatalf("steady stream target %d, want the 20 ms minimum", st.TargetDelayMs)
	}
}

func TestConfigValidate(t *testing.T) {
	for key, f := range map[string]func(*Config){
		"clock_rate":         func(c *Config) { c.ClockRate = 0 },
		"min_delay_ms":       func(c *Config) { c.MinDelayMs = 500 },
		"max_delay_ms":       func(c *Config) { c.MaxDelayMs = 5000 },
		"target_delay_ms":    func(c *Config) { c.TargetDelayMs = 1 },
		"slots":              func(c *Config) { c.Slots = 48 },
		"max_conceal_frames": func(c *Config) { c.MaxConcealFrames = -1 },
		"shrink_window_ms":   func(c *Config) { c.ShrinkWindowMs = 5 },
	} {
		c := DefaultConfig()
		f(&c)
		err := c.Validate()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "audio.jitter."+key) {
			t.Errorf("%s: %v", key, err)
		}
	}
	if _, err := New(DefaultConfig(), nil); !errors.Is(err, ErrConfig) {
		t.Errorf("nil decoder: %v", err)
	}
}

// TestRealOpusLossy runs encoded speech through the buffer with loss,
// reordering and jitter and checks every frame is accounted for.
func TestRealOpusLossy(t *testing.T) {
	speech, err := wavio.ReadWAVFile("../../testdata/audio/speech_en.48k.wav", 48000)
	if err != nil {
		t.Fatal(err)
	}
	cfg := codec.DefaultConfig()
	cfg.PacketLossPercent = 20
	enc, err := codec.NewEncoder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var pkts [][]byte
	for i := 0; i+960 <= len(speech); i += 960 {
		p, err := enc.EncodeAppend(nil, speech[i:i+960])
		if err != nil {
			t.Fatal(err)
		}
		pkts = append(pkts, p)
	}
	dec, _ := codec.NewDecoder(cfg)
	b, err := New(DefaultConfig(), dec)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	type ev struct {
		at int64
		i  int
	}
	var evs []ev
	lost := 0
	for i := range pkts {
		if i > 5 && r.IntN(10) == 0 {
			lost++
			continue
		}
		evs = append(evs, ev{int64(i*960) + int64(r.IntN(48*30)), i})
	}
	pcm := make([]int16, 320)
	kinds := map[FrameKind]int{}
	base := uint16(65500) // wraps during the run
	for tick := int64(0); tick < int64(len(pkts)+20)*960; tick += 960 {
		for _, e := range evs {
			if e.at >= tick && e.at < tick+960 {
				if err := b.Push(base+uint16(e.i), uint32(4294900000)+uint32(e.i*960), pkts[e.i], e.at); err != nil {
					t.Fatal(err)
				}
			}
		}
		k, err := b.Pull(pcm)
		if err != nil {
			t.Fatal(err)
		}
		kinds[k]++
	}
	st := b.Stats()
	if st.Lost+st.Late < uint64(lost) || st.Decoded+st.Late != uint64(len(evs)) || st.Recovered == 0 || st.Resets != 0 {
		t.Fatalf("lost %d, stats %+v kinds %v", lost, st, kinds)
	}
	if uint64(kinds[Recovered]) != st.Recovered || uint64(kinds[Decoded]) != st.Decoded {
		t.Fatalf("kinds %v vs stats %+v", kinds, st)
	}
}

func FuzzBuffer(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 2, 0, 1, 3, 9, 200, 7, 1, 1, 1})
	f.Add([]byte{255, 255, 0, 0, 0, 128, 1, 2, 3})
	f.Fuzz(func(t *testing.T, ops []byte) {
		cfg := DefaultConfig()
		cfg.Slots = 32
		b, err := New(cfg, &fakeDec{})
		if err != nil {
			t.Fatal(err)
		}
		pcm := make([]int16, 320)
		var seq uint16
		var ts uint32
		var at int64
		waiting := 0
		for len(ops) >= 3 {
			op, a, c := ops[0], ops[1], ops[2]
			ops = ops[3:]
			switch op % 4 {
			case 0: // push relative to the last one
				seq += uint16(int8(a))
				ts += uint32(int8(c)) * 960
				at += int64(c) * 100
				n := int(c) % 8
				_ = b.Push(seq, ts, append(pkt(a, a&1 == 1), make([]byte, n)...), at)
			case 1: // pull
				due := b.playing && b.present(b.nextExt)
				k, err := b.Pull(pcm)
				if err != nil {
					t.Fatal(err)
				}
				if b.playing && (b.hiExt-b.nextExt)*b.frame > b.ms(cfg.MaxDelayMs) {
					t.Fatalf("buffered span %d packets above max delay", b.hiExt-b.nextExt)
				}
				// A buffered packet that is due is played within the max delay.
				if due && k != Decoded {
					waiting++
				} else {
					waiting = 0
				}
				if waiting > cfg.MaxDelayMs/20+1 {
					t.Fatalf("due packet withheld for %d frames", waiting)
				}
			case 2: // wild jump
				seq ^= uint16(a) << 8
				ts ^= uint32(c) << 24
			default:
				_ = b.Push(seq, ts, nil, at)
			}
			st := b.Stats()
			if st.TargetDelayMs < cfg.MinDelayMs || st.TargetDelayMs > cfg.MaxDelayMs {
				t.Fatalf("target %d outside bounds", st.TargetDelayMs)
			}
		}
	})
}

func BenchmarkPushPull(b *testing.B) {
	buf, _ := New(DefaultConfig(), &fakeDec{})
	pcm := make([]int16, 320)
	p := pkt(1, true)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = buf.Push(uint16(i), uint32(i*960), p, int64(i*960))
		if _, err := buf.Pull(pcm); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkPushPullLossy(b *testing.B) {
	buf, _ := New(DefaultConfig(), &fakeDec{})
	pcm := make([]int16, 320)
	p := pkt(1, true)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%10 != 3 { // 10 % loss, recovered from FEC
			_ = buf.Push(uint16(i), uint32(i*960), p, int64(i*960+(i%3)*480))
		}
		if _, err := buf.Pull(pcm); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
