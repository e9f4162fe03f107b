package wavio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pion/webrtc/v4/pkg/media/oggreader"
)

// oggPage appends one hand-made page holding pkts (each laced in full, so
// a packet of 255·k bytes gets its terminating 0) with a valid checksum
// unless badCRC.
func oggPage(b *bytes.Buffer, serial, seq uint32, flags byte, badCRC bool, pkts ...[]byte) {
	var segs, body []byte
	for _, p := range pkts {
		n := len(p)
		for n >= 255 {
			segs = append(segs, 255)
			n -= 255
		}
		segs = append(segs, byte(n))
		body = append(body, p...)
	}
	pg := []byte("OggS\x00")
	pg = append(pg, flags)
	pg = binary.LittleEndian.AppendUint64(pg, 0)
	pg = binary.LittleEndian.AppendUint32(pg, serial)
	pg = binary.LittleEndian.AppendUint32(pg, seq)
	pg = binary.LittleEndian.AppendUint32(pg, 0)
	pg = append(pg, byte(len(segs)))
	pg = append(append(pg, segs...), body...)
	crc := bitwiseCRC(pg)
	if badCRC {
		crc++
	}
	binary.LittleEndian.PutUint32(pg[22:], crc)
	b.Write(pg)
}

// bitwiseCRC is the Ogg checksum computed bit by bit, independent of the
// package's table.
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

var testHead = append([]byte("OpusHead"), 1, 1, 0x38, 1, 0x80, 0xbb, 0, 0, 0, 0, 0)

func readAll(t *testing.T, in []byte, checkCRC bool) ([][]byte, error) {
	t.Helper()
	rd := NewOggReader(bytes.NewReader(in), checkCRC)
	var out [][]byte
	for {
		p, err := rd.ReadPacket()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, p)
	}
}

// TestOggReaderPacketsAcrossPages: several packets on a page, a packet
// spanning pages, a 255-byte packet (a zero lacing value ends it), and a
// page of another logical stream in between.
func TestOggReaderPacketsAcrossPages(t *testing.T) {
	big := bytes.Repeat([]byte{0xAB}, 700)
	even := bytes.Repeat([]byte{0xCD}, 255)
	var b bytes.Buffer
	oggPage(&b, 7, 0, oggFlagBOS, false, testHead)
	oggPage(&b, 7, 1, 0, false, []byte("OpusTags\x00\x00\x00\x00\x00\x00\x00\x00"))
	oggPage(&b, 7, 2, 0, false, []byte{0xFC, 1, 2, 3}, big, even)
	oggPage(&b, 9, 0, oggFlagBOS, false, []byte("other stream"))
	// One packet split over two pages: 255 bytes end page 3 (no terminator),
	// the rest and a terminator open page 4 (flag 1: continued).
	span := bytes.Repeat([]byte{0x11}, 300)
	var p3 bytes.Buffer
	oggPage(&p3, 7, 3, 0, false, span[:255])
	pg := p3.Bytes()
	pg[26] = 1 // drop the terminating 0 lacing value
	pg = append(pg[:27], append([]byte{255}, pg[29:]...)...)
	binary.LittleEndian.PutUint32(pg[22:], 0)
	binary.LittleEndian.PutUint32(pg[22:], bitwiseCRC(pg))
	b.Write(pg)
	oggPage(&b, 7, 4, 1|oggFlagEOS, false, span[255:], []byte{0x78, 9})
	got, err := readAll(t, b.Bytes(), true)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{{0xFC, 1, 2, 3}, big, even, span, {0x78, 9}}
	if len(got) != len(want) {
		t.Fatalf("%d packets, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("packet %d: %d bytes, want %d", i, len(got[i]), len(want[i]))
		}
	}
	rd := NewOggReader(bytes.NewReader(b.Bytes()), true)
	if _, err := rd.ReadPacket(); err != nil {
		t.Fatal(err)
	}
	if info, ok := rd.Head(); !ok || info.Channels != 1 || info.PreSkip != 312 || info.SampleRate != 48000 {
		t.Fatalf("head %+v %v", info, ok)
	}
}

func TestOggReaderErrors(t *testing.T) {
	valid := func(mod func(b *bytes.Buffer)) []byte {
		var b bytes.Buffer
		oggPage(&b, 1, 0, oggFlagBOS, false, testHead)
		oggPage(&b, 1, 1, 0, false, []byte("OpusTags"))
		mod(&b)
		return b.Bytes()
	}
	var noHead, noTags bytes.Buffer
	oggPage(&noHead, 1, 0, oggFlagBOS, false, []byte("OpusTags"))
	oggPage(&noTags, 1, 0, oggFlagBOS, false, testHead)
	oggPage(&noTags, 1, 1, 0, false, []byte{1, 2, 3})
	badCRC := valid(func(b *bytes.Buffer) { oggPage(b, 1, 2, 0, true, []byte{0x48, 1}) })
	huge := valid(func(b *bytes.Buffer) {
		for i := range 5 { // 5 pages of 255 segments of 255 bytes, never terminated
			var p bytes.Buffer
			oggPage(&p, 1, uint32(2+i), 1, false, bytes.Repeat([]byte{1}, 255*255-1))
			pg := p.Bytes()
			pg[27+254] = 255
			pg = append(pg, 0)
			binary.LittleEndian.PutUint32(pg[22:], 0)
			binary.LittleEndian.PutUint32(pg[22:], bitwiseCRC(pg))
			b.Write(pg)
		}
	})
	truncated := valid(func(b *bytes.Buffer) { oggPage(b, 1, 2, 0, false, []byte{0x48, 1, 2, 3}) })
	truncated = truncated[:len(truncated)-2]
	for _, c := range []struct {
		name string
		in   []byte
		crc  bool
		want error
	}{
		{"empty", nil, false, ErrInvalid},
		{"not ogg", []byte("RIFFxxxxWAVEfmt and then some more bytes"), false, ErrInvalid},
		{"no OpusHead", noHead.Bytes(), false, ErrInvalid},
		{"no OpusTags", noTags.Bytes(), false, ErrInvalid},
		{"bad checksum", badCRC, true, ErrInvalid},
		{"packet over 256 KiB", huge, false, ErrInvalid},
		{"truncated page", truncated, false, io.ErrUnexpectedEOF},
	} {
		_, err := readAll(t, c.in, c.crc)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// Without checksum verification a bad checksum is read through.
	if got, err := readAll(t, badCRC, false); err != nil || len(got) != 1 {
		t.Errorf("bad checksum unchecked: %d packets, %v", len(got), err)
	}
	// Errors are sticky.
	rd := NewOggReader(bytes.NewReader(noTags.Bytes()), false)
	_, err1 := rd.ReadPacket()
	_, err2 := rd.ReadPacket()
	if err1 == nil || err1 != err2 {
		t.Errorf("second read after %v: %v", err1, err2)
	}
}

func TestOggWriterLayout(t *testing.T) {
	var b bytes.Buffer
	w, err := NewOggWriter(&b, OggHead{Serial: 42, Channels: 1, PreSkip: DefaultPreSkip, Vendor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	// SILK WB 20 ms, CELT 10 ms, a code-1 pair of 20 ms SILK frames.
	pkts := [][]byte{{0x48, 1, 2, 3}, {0xF0, 4}, {0x49, 6, 7}}
	for _, p := range pkts {
		if err := w.WritePacket(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WritePacket(nil); !errors.Is(err, ErrOpusPacket) {
		t.Fatalf("empty packet: %v", err)
	}
	if err := w.WritePacket(append([]byte{0x48}, make([]byte, MaxOggPagePacket)...)); !errors.Is(err, ErrOpusPacket) {
		t.Fatalf("oversized packet: %v", err)
	}
	if err := w.Close(); err != nil || w.Close() != nil {
		t.Fatal(err)
	}
	if err := w.WritePacket(pkts[0]); err == nil {
		t.Fatal("write after Close accepted")
	}
	// pion's reader (an independent one) sees the same pages: headers,
	// then one packet per page with the granule of its end, EOS last.
	rd, head, err := oggreader.NewWith(bytes.NewReader(b.Bytes()))
	if err != nil || head.Channels != 1 || head.PreSkip != DefaultPreSkip || head.SampleRate != 48000 {
		t.Fatalf("pion: %+v %v", head, err)
	}
	wantGranule := []uint64{0, 960, 1440, 3360}
	for i := range 4 {
		payload, ph, err := rd.ParseNextPage()
		if err != nil {
			t.Fatalf("page %d: %v", i+1, err)
		}
		if ph.GranulePosition != wantGranule[i] || ph.Serial != 42 {
			t.Fatalf("page %d: granule %d serial %d", i+1, ph.GranulePosition, ph.Serial)
		}
		if i > 0 && !bytes.Equal(payload, pkts[i-1]) {
			t.Fatalf("page %d: %x", i+1, payload)
		}
	}
	if _, _, err := rd.ParseNextPage(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last packet: %v", err)
	}
	if flags := b.Bytes()[len(b.Bytes())-27-1-3+5]; flags != oggFlagEOS {
		t.Fatalf("last page flags %#x, want EOS", flags)
	}
	// A stream with no packet still ends with an (empty) EOS page.
	var e bytes.Buffer
	w, _ = NewOggWriter(&e, OggHead{Channels: 1})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(t, e.Bytes(), true); err != nil || len(got) != 0 {
		t.Fatalf("empty stream: %d packets, %v", len(got), err)
	}
	if _, err := NewOggWriter(&e, OggHead{Channels: 3}); !errors.Is(err, ErrFormat) {
		t.Fatalf("3 channels: %v", err)
	}
}

func TestOggFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	// Minimal valid Opus packets: SILK WB 20 ms TOC with a few payload bytes.
	pkts := [][]byte{{0x48, 1, 2, 3}, {0x48, 4, 5}, {0x48, 6, 7, 8, 9}}
	p := filepath.Join(dir, "a.ogg")
	if err := WriteOggFile(p, pkts); err != nil {
		t.Fatal(err)
	}
	got, info, err := ReadOggFile(p, 1)
	if err != nil {
		t.Fatal(err)
	}
	if info.Channels != 1 || info.PreSkip != DefaultPreSkip || len(got) != len(pkts) {
		t.Fatalf("info %+v, %d packets", info, len(got))
	}
	for i := range pkts {
		if !bytes.Equal(got[i], pkts[i]) {
			t.Fatalf("packet %d: %x != %x", i, got[i], pkts[i])
		}
	}
	if _, _, err := ReadOggFile(p, 2); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "want 2") {
		t.Fatalf("channel mismatch: %v", err)
	}
	if _, _, err := ReadOgg(bytes.NewReader([]byte("RIFFxxxxWAVE")), 1); !errors.Is(err, ErrInvalid) {
		t.Fatalf("non-ogg: %v", err)
	}
	raw, _ := os.ReadFile(p)
	raw[len(raw)-1] ^= 0xff
	if _, _, err := ReadOgg(bytes.NewReader(raw), 1); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("damaged file: %v", err)
	}
	if err := WriteOggFile(p, [][]byte{{}}); !errors.Is(err, ErrOpusPacket) {
		t.Fatalf("empty packet: %v", err)
	}
}

// TestOggRecordedFilesMatchPion: the committed recordings read the same
// through OggReader as page by page through pion's reader (they are laid
// out one packet per page).
func TestOggRecordedFilesMatchPion(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/recorded/*/*.ogg")
	if len(files) < 2 {
		t.Fatalf("found %d recorded files", len(files))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, info, err := ReadOgg(bytes.NewReader(raw), 1)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		rd, head, err := oggreader.NewWith(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: pion: %v", f, err)
		}
		if int(head.PreSkip) != info.PreSkip || int(head.Channels) != info.Channels {
			t.Fatalf("%s: head %+v vs pion %+v", f, info, head)
		}
		var want [][]byte
		for {
			payload, ph, err := rd.ParseNextPage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: pion page: %v", f, err)
			}
			if typ, ok := ph.HeaderType(payload); (ok && typ == oggreader.HeaderOpusTags) || len(payload) == 0 {
				continue
			}
			want = append(want, payload)
		}
		if len(got) != len(want) || len(got) == 0 {
			t.Fatalf("%s: %d packets, pion %d", f, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%s: packet %d differs", f, i)
			}
		}
	}
}

func TestOpusSamples(t *testing.T) {
	for _, c := range []struct {
		p    []byte
		want int
	}{
		{[]byte{31 << 3}, 960}, {[]byte{1 << 3}, 960}, {[]byte{3 << 3}, 2880}, {[]byte{16 << 3}, 120},
		{[]byte{0x48}, 960}, {[]byte{12 << 3}, 480}, {[]byte{13<<3 | 1, 0}, 1920}, {[]byte{31<<3 | 3, 6}, 5760},
		{[]byte{1<<3 | 3, 3}, 2880}, {[]byte{18<<3 | 2, 1, 2}, 960},
	} {
		if got, err := OpusSamples(c.p); err != nil || got != c.want {
			t.Errorf("%x: %d, %v; want %d", c.p, got, err, c.want)
		}
		if d, err := OpusDuration(c.p); err != nil || int(d.Microseconds())*48/1000 != c.want {
			t.Errorf("%x: duration %v, %v", c.p, d, err)
		}
	}
	for _, p := range [][]byte{nil, {31<<3 | 3}, {31<<3 | 3, 0}, {31<<3 | 3, 7}, {3<<3 | 3, 3}} {
		if _, err := OpusSamples(p); !errors.Is(err, ErrOpusPacket) {
			t.Errorf("%x: %v, want ErrOpusPacket", p, err)
		}
	}
}

// FuzzOggReader: the reader never panics, ends in bounded reads, and every
// packet it returns lies within the input.
func FuzzOggReader(f *testing.F) {
	var b bytes.Buffer
	oggPage(&b, 1, 0, oggFlagBOS, false, append([]byte("OpusHead"), 1, 1, 0, 0))
	oggPage(&b, 1, 1, 0, false, []byte("OpusTags"))
	oggPage(&b, 1, 2, 0, false, []byte{1, 2, 3}, bytes.Repeat([]byte{9}, 300))
	f.Add(b.Bytes(), false)
	f.Add([]byte("OggS"), true)
	f.Fuzz(func(t *testing.T, in []byte, checkCRC bool) {
		rd := NewOggReader(bytes.NewReader(in), checkCRC)
		total := 0
		for range len(in) + 1 {
			p, err := rd.ReadPacket()
			if err != nil {
				return
			}
			if total += len(p); total > len(in) {
				t.Fatalf("returned %d bytes from %d", total, len(in))
			}
		}
		t.Fatal("more packets than input bytes")
	})
}
