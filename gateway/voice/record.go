package voice

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Record mode (Config.RecordDir) writes, per voice session, into
// RecordDir/<session id>/:
//
//   - inbound.ogg: the client's Opus packets as received, byte for byte, as
//     Ogg Opus (see record_ogg.go for the layout);
//   - outbound.ogg: exactly the Opus packets the gateway sent;
//   - events.jsonl: every server event as sent on the events channel and
//     every client event received, one JSON object a line:
//     {"t_ms":<ms since the session started>,"dir":"out"|"in","event":<the event>}
//     (a client message that is not JSON is kept as a string in "raw").
//
// The media path never waits for the disk: each hook copies what it
// records into a bounded queue read by one writer goroutine per session;
// when the queue is full the item is dropped and counted
// (vera_voice_record_dropped_total), so audio never stalls. The writer is
// joined, and every file flushed and closed, when the session ends.

// Record file names inside a session's directory.
const (
	RecordInbound  = "inbound.ogg"
	RecordOutbound = "outbound.ogg"
	RecordEvents   = "events.jsonl"
)

// ErrRecordSessionID: a session id that cannot name a directory.
var ErrRecordSessionID = errors.New("voice: record: session id is not a safe directory name")

const (
	// recordQueue bounds the items waiting for the writer: about 5 s of
	// inbound and outbound packets at 50 each a second, plus events.
	recordQueue = 512
	// reorderWindow is how many inbound packets are held to put reordered
	// ones back in RTP timestamp order (160 ms at 20 ms packets).
	reorderWindow = 8
	// recordFlushEvery bounds how much a crash can lose.
	recordFlushEvery = time.Second
	// recordMaxPayload bounds a recorded packet (codec.MaxPacketBytes).
	recordMaxPayload = 1500
)

type recordKind uint8

const (
	recInbound recordKind = iota
	recOutbound
	recEventOut
	recEventIn
)

// recordItem is one queued record. pkt (packets) comes from recordPool and
// goes back to it once written.
type recordItem struct {
	kind recordKind
	seq  uint16
	ts   uint32
	at   time.Duration // since the session started (events)
	pkt  *recordBuf
	data []byte // events: a copy
}

type recordBuf struct {
	n int
	b [recordMaxPayload]byte
}

var recordPool = sync.Pool{New: func() any { return new(recordBuf) }}

// recording is one session's record. Its hook methods are safe for
// concurrent use and never block; all of them are no-ops on a nil
// *recording (record mode off).
type recording struct {
	dir     string
	origin  time.Time
	ch      chan recordItem
	quit    chan struct{}
	done    chan struct{}
	once    sync.Once
	dropped prometheus.Counter // may be nil
	ndrop   atomic.Int64
	log     *slog.Logger

	// Owned by the writer goroutine.
	files   []*os.File
	in, out *oggOpus
	ev      *bufio.Writer
	pending []recordItem // inbound reorder window, sorted by timestamp
	err     error        // the first write error; later items are not written
}

// openRecording creates root/<sessionID>/ and its three files and starts
// the writer. origin is the session's start (events' t_ms).
func openRecording(root, sessionID string, origin time.Time, dropped prometheus.Counter, log *slog.Logger) (*recording, error) {
	if !safeDirName(sessionID) {
		return nil, fmt.Errorf("%w: %q", ErrRecordSessionID, sessionID)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := filepath.Join(root, sessionID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("voice: record: %w", err)
	}
	r := &recording{dir: dir, origin: origin, ch: make(chan recordItem, recordQueue), quit: make(chan struct{}),
		done: make(chan struct{}), dropped: dropped, log: log}
	h := fnv.New32a()
	_, _ = h.Write([]byte(sessionID))
	serial := h.Sum32()
	var err error
	open := func(name string) *bufio.Writer {
		if err != nil {
			return nil
		}
		var f *os.File
		f, err = os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			err = fmt.Errorf("voice: record: %w", err)
			return nil
		}
		r.files = append(r.files, f)
		return bufio.NewWriterSize(f, 32<<10)
	}
	inW, outW, evW := open(RecordInbound), open(RecordOutbound), open(RecordEvents)
	if err == nil {
		r.in, err = newOggOpus(inW, serial)
	}
	if err == nil {
		r.out, err = newOggOpus(outW, serial+1)
	}
	if err != nil {
		for _, f := range r.files {
			_ = f.Close()
		}
		return nil, err
	}
	r.ev = evW
	go r.run()
	return r, nil
}

// safeDirName: session ids are base64url with a prefix; anything else is
// refused rather than escaped, so a record can never leave its root.
func safeDirName(s string) bool {
	if s == "" || len(s) > 128 || s == "." || s == ".." {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// push queues it without blocking; a full queue drops it.
func (r *recording) push(it recordItem) {
	select {
	case r.ch <- it:
	default:
		if it.pkt != nil {
			recordPool.Put(it.pkt)
		}
		r.drop()
	}
}

func (r *recording) packet(kind recordKind, seq uint16, ts uint32, payload []byte) {
	if r == nil || len(payload) == 0 {
		return
	}
	if len(payload) > recordMaxPayload {
		r.drop() // not Opus from a conforming sender: never recorded
		return
	}
	b := recordPool.Get().(*recordBuf)
	b.n = copy(b.b[:], payload)
	r.push(recordItem{kind: kind, seq: seq, ts: ts, pkt: b})
}

func (r *recording) drop() {
	r.ndrop.Add(1)
	if r.dropped != nil {
		r.dropped.Inc()
	}
}

// inbound records one received RTP packet's Opus payload (the caller keeps
// payload).
func (r *recording) inbound(seq uint16, ts uint32, payload []byte) {
	r.packet(recInbound, seq, ts, payload)
}

// outbound records one sent Opus packet; it has the signature of the
// sender's packet tap.
func (r *recording) outbound(payload []byte, ts uint32) {
	r.packet(recOutbound, 0, ts, payload)
}

// eventOut records a server event as sent; eventIn a client event as
// received. data is copied.
func (r *recording) eventOut(data []byte) { r.event(recEventOut, data) }
func (r *recording) eventIn(data []byte)  { r.event(recEventIn, data) }

func (r *recording) event(kind recordKind, data []byte) {
	if r == nil {
		return
	}
	r.push(recordItem{kind: kind, at: time.Since(r.origin), data: bytes.Clone(data)})
}

// close stops the writer after it has written what is queued, flushes and
// closes the files. Items pushed after close are not written.
func (r *recording) close() error {
	if r == nil {
		return nil
	}
	r.once.Do(func() { close(r.quit) })
	<-r.done
	return r.err
}

func (r *recording) run() {
	defer close(r.done)
	t := time.NewTicker(recordFlushEvery)
	defer t.Stop()
	for {
		select {
		case it := <-r.ch:
			r.handle(it)
		case <-t.C:
			r.flush()
		case <-r.quit:
			for {
				select {
				case it := <-r.ch:
					r.handle(it)
					continue
				default:
				}
				break
			}
			r.finish()
			return
		}
	}
}

func (r *recording) handle(it recordItem) {
	if r.err != nil {
		if it.pkt != nil {
			recordPool.Put(it.pkt)
		}
		return
	}
	switch it.kind {
	case recInbound:
		r.inboundPacket(it) // keeps it.pkt
	case recOutbound:
		r.setErr(r.out.write(it.ts, it.pkt.b[:it.pkt.n]))
		recordPool.Put(it.pkt)
	case recEventOut, recEventIn:
		r.writeEvent(it)
	}
}

// inboundPacket puts reordered packets back in timestamp order within a
// short window and skips duplicates, then writes the oldest held packet.
// It takes over it.pkt.
func (r *recording) inboundPacket(it recordItem) {
	for _, p := range r.pending {
		if p.seq == it.seq && p.ts == it.ts {
			r.in.late++ // a duplicate
			recordPool.Put(it.pkt)
			return
		}
	}
	i := len(r.pending)
	for i > 0 && int32(it.ts-r.pending[i-1].ts) < 0 {
		i--
	}
	r.pending = append(r.pending, recordItem{})
	copy(r.pending[i+1:], r.pending[i:])
	r.pending[i] = it
	if len(r.pending) > reorderWindow {
		r.writeOldestInbound()
	}
}

func (r *recording) writeOldestInbound() {
	p := r.pending[0]
	r.pending = append(r.pending[:0], r.pending[1:]...)
	r.setErr(r.in.write(p.ts, p.pkt.b[:p.pkt.n]))
	recordPool.Put(p.pkt)
}

func (r *recording) writeEvent(it recordItem) {
	dir := "out"
	if it.kind == recEventIn {
		dir = "in"
	}
	var line []byte
	line = append(line, `{"t_ms":`...)
	line = strconv.AppendInt(line, it.at.Milliseconds(), 10)
	line = append(line, `,"dir":"`...)
	line = append(line, dir...)
	line = append(line, `",`...)
	var c bytes.Buffer
	if json.Compact(&c, it.data) == nil {
		line = append(line, `"event":`...)
		line = append(line, c.Bytes()...)
	} else {
		s, _ := json.Marshal(string(it.data)) // invalid UTF-8 becomes U+FFFD
		line = append(line, `"raw":`...)
		line = append(line, s...)
	}
	line = append(line, "}\n"...)
	if _, err := r.ev.Write(line); err != nil {
		r.setErr(fmt.Errorf("voice: record: events: %w", err))
	}
}

func (r *recording) setErr(err error) {
	if err != nil && r.err == nil {
		r.err = err
		r.log.Warn("voice: record: write failed; recording stops", "dir", r.dir, "err", err)
	}
}

func (r *recording) flush() {
	if r.err != nil {
		return
	}
	for _, w := range []*bufio.Writer{r.in.w, r.out.w, r.ev} {
		if err := w.Flush(); err != nil {
			r.setErr(fmt.Errorf("voice: record: flush: %w", err))
			return
		}
	}
}

func (r *recording) finish() {
	for len(r.pending) > 0 && r.err == nil {
		r.writeOldestInbound()
	}
	for _, p := range r.pending {
		recordPool.Put(p.pkt)
	}
	r.pending = nil
	if r.err == nil {
		r.setErr(r.in.close())
		r.setErr(r.out.close())
		if err := r.ev.Flush(); err != nil {
			r.setErr(fmt.Errorf("voice: record: flush events: %w", err))
		}
	}
	for _, f := range r.files {
		if err := f.Close(); err != nil {
			r.setErr(fmt.Errorf("voice: record: close: %w", err))
		}
	}
	r.log.Debug("voice: record closed", "dir", r.dir,
		"inbound", r.in.packets, "outbound", r.out.packets, "late", r.in.late+r.out.late,
		"malformed", r.in.bad+r.out.bad, "dropped", r.ndrop.Load())
}

// checkRecordDir is config validation for record_dir: empty is off;
// otherwise it is a directory, or does not exist yet and its nearest
// existing parent is a directory (the first session creates it).
func checkRecordDir(dir string) error {
	if dir == "" {
		return nil
	}
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			return nil
		case err == nil && p == filepath.Clean(dir):
			return fmt.Errorf("%s is not a directory", dir)
		case err == nil:
			return fmt.Errorf("%s cannot be created: %s is not a directory", dir, p)
		case !errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("%s: %w", dir, err)
		}
		if filepath.Dir(p) == p {
			return fmt.Errorf("%s cannot be created", dir)
		}
	}
}

// startRecording opens the session's record and taps the connection's
// sent packets into it. A record that cannot be opened is logged and the
// call goes on unrecorded: recording never fails a session.
func (s *voiceSession) startRecording(id string) {
	if s.cfg.RecordDir == "" {
		return
	}
	rec, err := openRecording(s.cfg.RecordDir, id, s.origin, s.m.RecordDropped, s.log)
	if err != nil {
		s.log.Warn("voice: record: session not recorded", "err", err)
		return
	}
	s.rec = rec
	s.conn.Sender().SetPacketTap(rec.outbound)
}

// stopRecording detaches the tap, then flushes and closes the record.
func (s *voiceSession) stopRecording() {
	if s.rec == nil {
		return
	}
	s.conn.Sender().SetPacketTap(nil)
	if err := s.rec.close(); err != nil {
		s.log.Warn("voice: record: incomplete", "err", err)
	}
}
