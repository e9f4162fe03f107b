package voice

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/veraneural/vera-gateway/audio/codec"
	"github.com/veraneural/vera-gateway/audio/wavio"
)

// oggHeaderBytes is an Ogg page header's fixed part (RFC 3533 §6).
const oggHeaderBytes = 27

// bitwiseCRC is the Ogg page checksum computed bit by bit, independent of
// the writer's table.
func bitwiseCRC(b []byte) uint32 {
	var crc uint32
	for _, c := range b {
		crc ^= uint32(c) << 24
		for range 8 {
			if crc&0x80000000 != 0 {
				crc = crc<<1 ^ 0x04c11db7
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// oggPage is one parsed page of a recorded file.
type oggPage struct {
	flags   byte
	granule uint64
	serial  uint32
	seq     uint32
	packet  []byte
}

// parseOgg reads a whole Ogg file strictly: capture pattern, version, CRC,
// page sequence, one packet per page, BOS only first, EOS only last, one
// serial, granule positions never going back.
func parseOgg(b []byte) ([]oggPage, error) {
	var pages []oggPage
	for off := 0; off < len(b); {
		if len(b)-off < oggHeaderBytes || string(b[off:off+4]) != "OggS" || b[off+4] != 0 {
			return nil, fmt.Errorf("page %d at %d: bad header", len(pages), off)
		}
		nseg := int(b[off+26])
		if len(b)-off < oggHeaderBytes+nseg {
			return nil, fmt.Errorf("page %d: short segment table", len(pages))
		}
		size := 0
		for i := range nseg {
			l := int(b[off+oggHeaderBytes+i])
			size += l
			if l < 255 && i != nseg-1 {
				return nil, fmt.Errorf("page %d: more than one packet", len(pages))
			}
		}
		if nseg == 0 || b[off+oggHeaderBytes+nseg-1] == 255 {
			return nil, fmt.Errorf("page %d: packet not completed on its page", len(pages))
		}
		end := off + oggHeaderBytes + nseg + size
		if end > len(b) {
			return nil, fmt.Errorf("page %d: truncated", len(pages))
		}
		pg := append([]byte(nil), b[off:end]...)
		want := binary.LittleEndian.Uint32(pg[22:])
		binary.LittleEndian.PutUint32(pg[22:], 0)
		if got := bitwiseCRC(pg); got != want {
			return nil, fmt.Errorf("page %d: crc %08x, want %08x", len(pages), got, want)
		}
		p := oggPage{flags: b[off+5], granule: binary.LittleEndian.Uint64(b[off+6:]), serial: binary.LittleEndian.Uint32(b[off+14:]),
			seq: binary.LittleEndian.Uint32(b[off+18:]), packet: b[off+oggHeaderBytes+nseg : end]}
		if p.seq != uint32(len(pages)) {
			return nil, fmt.Errorf("page %d: sequence %d", len(pages), p.seq)
		}
		if len(pages) > 0 {
			prev := pages[len(pages)-1]
			if p.serial != prev.serial || p.granule < prev.granule || p.flags&0x02 != 0 || prev.flags&0x04 != 0 {
				return nil, fmt.Errorf("page %d: serial/granule/flags out of order", len(pages))
			}
		} else if p.flags != 0x02 {
			return nil, fmt.Errorf("first page flags %#x, want BOS", p.flags)
		}
		pages = append(pages, p)
		off = end
	}
	if len(pages) < 3 || pages[len(pages)-1].flags&0x04 == 0 {
		return nil, errors.New("no audio page or no EOS")
	}
	if string(pages[0].packet[:8]) != "OpusHead" || string(pages[1].packet[:8]) != "OpusTags" {
		return nil, errors.New("missing OpusHead/OpusTags")
	}
	return pages, nil
}

// audioPages checks that each audio page's granule is the sum of the
// packet durations so far and returns the packets.
func audioPages(t *testing.T, pages []oggPage) [][]byte {
	t.Helper()
	var sum uint64
	var out [][]byte
	for i, p := range pages[2:] {
		if len(p.packet) == 0 && i == len(pages)-3 {
			continue // an empty EOS page
		}
		d, err := wavio.OpusSamples(p.packet)
		if err != nil {
			t.Fatalf("audio page %d: %v", i, err)
		}
		sum += uint64(d)
		if p.granule != sum {
			t.Fatalf("audio page %d: granule %d, want %d", i, p.granule, sum)
		}
		out = append(out, p.packet)
	}
	return out
}

// tone is 20 ms frames of a 440 Hz tone at 16 kHz.
func toneFrames(n int) [][]int16 {
	out := make([][]int16, n)
	for i := range out {
		f := make([]int16, 320)
		for j := range f {
			f[j] = int16(6000 * math.Sin(2*math.Pi*440*float64(i*320+j)/16000))
		}
		out[i] = f
	}
	return out
}

func encodeFrames(t testing.TB, n int) [][]byte {
	t.Helper()
	cfg := codec.DefaultConfig()
	cfg.EncodeRate = 16000
	enc, err := codec.NewEncoder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var pkts [][]byte
	for _, f := range toneFrames(n) {
		p, err := enc.EncodeAppend(nil, f)
		if err != nil {
			t.Fatal(err)
		}
		pkts = append(pkts, p)
	}
	return pkts
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRecordingWritesValidFiles drives a recording as a session does and
// reads every file back: inbound packets (reordered and duplicated on the
// way) come out in order and byte for byte, a pause becomes gap packets,
// outbound silence too, and events.jsonl has one JSON object a line.
func TestRecordingWritesValidFiles(t *testing.T) {
	root := t.TempDir()
	pkts := encodeFrames(t, 40)
	dropped := prometheus.NewCounter(prometheus.CounterOpts{Name: "d"})
	origin := time.Now()
	r, err := openRecording(root, "s_TEST-1", origin, dropped, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Inbound: packets 0..19, then a 200 ms pause (10 frames not sent),
	// then 20..39; 5 and 6 swapped, 12 duplicated.
	order := []int{}
	for i := range 40 {
		order = append(order, i)
	}
	order[5], order[6] = 6, 5
	order = append(order[:13], append([]int{12}, order[13:]...)...)
	const ts0 = uint32(0xfffff000) // wraps during the session
	for _, i := range order {
		ts := ts0 + uint32(i)*960
		if i >= 20 {
			ts += 10 * 960
		}
		r.inbound(uint16(60000+i), ts, pkts[i])
	}
	r.eventIn([]byte("{\n  \"type\": \"hello\",\n  \"device\": \"phone\"\n}"))
	r.eventIn([]byte("not json\n"))
	r.eventOut([]byte(`{"type":"session.created","seq":0}`))
	// Outbound: 10 packets, 1 s of nothing, 10 packets.
	for i := range 20 {
		ts := uint32(1000 + i*960)
		if i >= 10 {
			ts += 50 * 960
		}
		r.outbound(pkts[i], ts)
	}
	if err := r.close(); err != nil {
		t.Fatal(err)
	}
	if err := r.close(); err != nil { // idempotent
		t.Fatal(err)
	}
	r.inbound(1, 1, pkts[0]) // after close: neither written nor a panic

	dir := filepath.Join(root, "s_TEST-1")
	inPages, err := parseOgg(readFile(t, filepath.Join(dir, RecordInbound)))
	if err != nil {
		t.Fatalf("inbound.ogg: %v", err)
	}
	in := audioPages(t, inPages)
	var want [][]byte
	want = append(want, pkts[:20]...)
	for range 10 {
		want = append(want, []byte{gapPacket})
	}
	want = append(want, pkts[20:]...)
	if len(in) != len(want) {
		t.Fatalf("inbound: %d packets, want %d", len(in), len(want))
	}
	for i := range want {
		if !bytes.Equal(in[i], want[i]) {
			t.Fatalf("inbound packet %d differs", i)
		}
	}
	outPages, err := parseOgg(readFile(t, filepath.Join(dir, RecordOutbound)))
	if err != nil {
		t.Fatalf("outbound.ogg: %v", err)
	}
	out := audioPages(t, outPages)
	if len(out) != 70 || !bytes.Equal(out[9], pkts[9]) || !isGapPacket(out[10]) || !isGapPacket(out[59]) || !bytes.Equal(out[60], pkts[10]) {
		t.Fatalf("outbound: %d packets, gap not where the silence was", len(out))
	}
	if inPages[0].serial == outPages[0].serial {
		t.Error("inbound and outbound share a serial")
	}

	// The project's own reader takes the file, and every packet decodes
	// (gap packets as concealment).
	got, info, err := wavio.ReadOggFile(filepath.Join(dir, RecordInbound), 1)
	if err != nil || len(got) != len(want) || info.PreSkip != wavio.DefaultPreSkip {
		t.Fatalf("wavio.ReadOgg: %d packets, %+v, %v", len(got), info, err)
	}
	dcfg := codec.DefaultConfig()
	dcfg.DecodeRate = 16000
	dec, err := codec.NewDecoder(dcfg)
	if err != nil {
		t.Fatal(err)
	}
	pcm := make([]int16, 320)
	for i, p := range got {
		if n, err := dec.Decode(p, pcm); err != nil || n != 320 {
			t.Fatalf("decode packet %d (%d bytes): %d samples, %v", i, len(p), n, err)
		}
	}

	lines := strings.Split(strings.TrimSuffix(string(readFile(t, filepath.Join(dir, RecordEvents))), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("events.jsonl has %d lines, want 3:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	var recs []recordedEvent
	for i, l := range lines {
		var e recordedEvent
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %d %q: %v", i, l, err)
		}
		if e.TMs < 0 || e.TMs > time.Since(origin).Milliseconds() {
			t.Errorf("line %d: t_ms %d outside the session", i, e.TMs)
		}
		recs = append(recs, e)
	}
	if recs[0].Dir != "in" || recs[0].Type() != "hello" || recs[1].Raw != "not json\n" || recs[2].Dir != "out" || recs[2].Type() != "session.created" {
		t.Errorf("events: %+v", recs)
	}
	var m dto.Metric
	_ = dropped.Write(&m)
	if m.GetCounter().GetValue() != 0 {
		t.Errorf("dropped %v with a writer keeping up", m.GetCounter().GetValue())
	}
	opusinfo(t, filepath.Join(dir, RecordInbound), filepath.Join(dir, RecordOutbound))
}

// opusinfo checks files with opus-tools' validator (installed in CI).
func opusinfo(t *testing.T, paths ...string) {
	t.Helper()
	bin, err := exec.LookPath("opusinfo")
	if err != nil {
		t.Log("opusinfo not installed (opus-tools): files checked by the strict reader only")
		return
	}
	for _, p := range paths {
		out, err := exec.Command(bin, p).CombinedOutput()
		if err != nil || bytes.Contains(bytes.ToLower(out), []byte("warning")) || bytes.Contains(bytes.ToLower(out), []byte("error")) {
			t.Errorf("opusinfo %s: %v\n%s", filepath.Base(p), err, out)
		}
	}
}

// recordedEvent is one events.jsonl line.
type recordedEvent struct {
	TMs   int64           `json:"t_ms"`
	Dir   string          `json:"dir"`
	Event json.RawMessage `json:"event"`
	Raw   string          `json:"raw"`
}

func (e recordedEvent) Type() string {
	var v struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(e.Event, &v)
	return v.Type
}

// TestRecordingDropsWhenFull: a writer that cannot keep up never blocks
// the hooks; what does not fit is dropped and counted.
func TestRecordingDropsWhenFull(t *testing.T) {
	root := t.TempDir()
	dropped := prometheus.NewCounter(prometheus.CounterOpts{Name: "d"})
	r, err := openRecording(root, "s_full", time.Now(), dropped, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Hold the writer: fill the queue beyond its bound before it runs
	// further by pushing from this goroutine far faster than files take.
	pkt := encodeFrames(t, 1)[0]
	const n = 20 * recordQueue
	for i := range n {
		r.outbound(pkt, uint32(i*960))
	}
	if err := r.close(); err != nil {
		t.Fatal(err)
	}
	var m dto.Metric
	_ = dropped.Write(&m)
	d := int64(m.GetCounter().GetValue())
	if d != r.ndrop.Load() {
		t.Errorf("metric %d, session count %d", d, r.ndrop.Load())
	}
	pages, err := parseOgg(readFile(t, filepath.Join(root, "s_full", RecordOutbound)))
	if err != nil {
		t.Fatal(err)
	}
	// Dropped packets leave holes that the file keeps as gap packets.
	var written int64
	for _, p := range pages[2:] {
		if !isGapPacket(p.packet) {
			written++
		}
	}
	if written+d != n || written < recordQueue/2 {
		t.Errorf("written %d + dropped %d, want %d in all", written, d, n)
	}
}

func TestRecordingRefusesUnsafeIDs(t *testing.T) {
	for _, id := range []string{"", ".", "..", "../x", "a/b", `a\b`, "s_ok\x00", strings.Repeat("a", 200)} {
		if _, err := openRecording(t.TempDir(), id, time.Now(), nil, nil); !errors.Is(err, ErrRecordSessionID) {
			t.Errorf("%q: %v, want ErrRecordSessionID", id, err)
		}
	}
}

func TestConfigRecordDir(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir string
		ok  bool
	}{
		{"", true}, {tmp, true}, {filepath.Join(tmp, "new", "deeper"), true},
		{file, false}, {filepath.Join(file, "sub"), false},
	} {
		cfg := DefaultConfig()
		cfg.RecordDir = c.dir
		err := cfg.Validate()
		if (err == nil) != c.ok {
			t.Errorf("record_dir %q: %v", c.dir, err)
		}
		if err != nil && !strings.Contains(err.Error(), "record_dir") {
			t.Errorf("error does not name the key: %v", err)
		}
	}
}

// FuzzRecordOgg: any packets and timestamps give a file the strict reader
// accepts, with every well-formed packet accounted for.
func FuzzRecordOgg(f *testing.F) {
	f.Add([]byte{0xf8, 0x10, 0x01, 0x00, 0x08, 0x20})
	f.Fuzz(func(t *testing.T, b []byte) {
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		o, err := newOggOpus(w, 7)
		if err != nil {
			t.Fatal(err)
		}
		// Each 3-byte chunk: a timestamp step (in 10 ms units, may go
		// back) and a TOC byte.
		ts := uint32(0)
		for i := 0; i+2 < len(b); i += 3 {
			ts += uint32(int8(b[i])) * 480
			if err := o.write(ts, []byte{b[i+1], b[i+2]}); err != nil {
				t.Fatal(err)
			}
		}
		if err := o.close(); err != nil {
			t.Fatal(err)
		}
		pages, err := parseOgg(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		audioPages(t, pages)
	})
}

// BenchmarkRecordPacket is the per-packet cost of the record hook on the
// media path (off: record mode off; on: copy into the queue, or drop when
// the writer is behind, which this loop, far faster than 50 packets a
// second, makes it; enqueued: when the writer keeps up) and of the writer
// goroutine's Ogg page per packet.
func BenchmarkRecordPacket(b *testing.B) {
	pkt := encodeFrames(b, 1)[0]
	b.Run("off", func(b *testing.B) {
		var r *recording
		b.ReportAllocs()
		for b.Loop() {
			r.inbound(1, 960, pkt)
		}
	})
	b.Run("on", func(b *testing.B) {
		r, err := openRecording(b.TempDir(), "s_bench", time.Now(), nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			r.inbound(uint16(i), uint32(i*960), pkt)
			i++
		}
		b.StopTimer()
		b.ReportMetric(float64(r.ndrop.Load())/float64(i), "dropped/op")
		if err := r.close(); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("enqueued", func(b *testing.B) {
		// The path when the writer keeps up: copy, queue, and the writer's
		// receive and buffer return (no writer goroutine; drained here).
		r := &recording{ch: make(chan recordItem, 1)}
		b.ReportAllocs()
		for b.Loop() {
			r.inbound(1, 960, pkt)
			it := <-r.ch
			recordPool.Put(it.pkt)
		}
	})
	b.Run("ogg_page", func(b *testing.B) {
		o, err := newOggOpus(bufio.NewWriter(io.Discard), 1)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := o.write(uint32(i*960), pkt); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// TestRecordingOversizedPacket: a payload no Opus sender produces is not
// recorded, and counted as dropped.
func TestRecordingOversizedPacket(t *testing.T) {
	dropped := prometheus.NewCounter(prometheus.CounterOpts{Name: "d"})
	r, err := openRecording(t.TempDir(), "s_big", time.Now(), dropped, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.inbound(1, 0, make([]byte, recordMaxPayload+1))
	if err := r.close(); err != nil {
		t.Fatal(err)
	}
	var m dto.Metric
	_ = dropped.Write(&m)
	if r.ndrop.Load() != 1 || m.GetCounter().GetValue() != 1 || r.in.packets != 0 {
		t.Errorf("dropped %d (metric %v), written %d; want 1, 1, 0", r.ndrop.Load(), m.GetCounter().GetValue(), r.in.packets)
	}
}
