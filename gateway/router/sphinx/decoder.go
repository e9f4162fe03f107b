//go:build !noembedded

package sphinx

/*
#cgo pkg-config: pocketsphinx sphinxbase
#include <stdlib.h>
#include <pocketsphinx.h>
#include <sphinxbase/err.h>

// cmd_ln_init is variadic, which cgo cannot call; this wrapper fixes the
// argument list. Logging goes nowhere: the gateway logs through slog.
// fwdflat and bestpath ("yes"/"no") switch the passes ps_end_utt and the
// final ps_get_hyp run over the whole utterance after the streaming one.
static cmd_ln_t *vera_ps_config(const char *hmm, const char *dict, const char *lm, const char *fwdflat, const char *bestpath) {
	err_set_logfp(NULL);
	return cmd_ln_init(NULL, ps_args(), TRUE,
		"-hmm", hmm, "-dict", dict, "-lm", lm,
		"-fwdflat", fwdflat, "-bestpath", bestpath,
		"-logfn", "/dev/null",
		NULL);
}

// vera_ps_spot_config: no language model; the keyword search (-kws) is the
// decoder's only search, with the phone-loop probability given.
static cmd_ln_t *vera_ps_spot_config(const char *hmm, const char *dict, const char *kws, const char *plp) {
	err_set_logfp(NULL);
	return cmd_ln_init(NULL, ps_args(), TRUE,
		"-hmm", hmm, "-dict", dict, "-kws", kws, "-kws_plp", plp,
		"-logfn", "/dev/null",
		NULL);
}

*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"
)

// Decoder is one pocketsphinx decoder. Not safe for concurrent use: the
// pool hands it to one goroutine at a time.
type Decoder struct {
	ps     *C.ps_decoder_t
	conf   *C.cmd_ln_t
	kws    bool
	inUtt  bool
	search string
	lmName string           // pocketsphinx's name of its default (LM) search
	agc    *agc             // the spotter's gain control; nil on transcription decoders
	min    map[string]int32 // a spotter's phrases and their least scores
	st     settling         // early end of a transcription decoder's utterance (settle.go)

	// The CPU-heavy calls run on the pool's workers (work.go) through j;
	// op, pcm, rc and hyp are its arguments and results.
	w   *workers // nil: on the caller's goroutine
	j   *job
	op  int
	pcm []int16
	rc  C.int
	hyp string
}

// Operations a worker runs for the decoder.
const (
	opProcess = iota + 1
	opHypothesis
	opEnd
)

// attach makes d run its heavy calls on w at priority p.
func (d *Decoder) attach(w *workers) {
	d.w = w
	if d.j == nil {
		d.j = newJob(d.exec)
	}
}

// setPriority is the priority of d's calls until the next Acquire.
func (d *Decoder) setPriority(p Priority) {
	if d.j != nil {
		d.j.prio = p
	}
}

// run performs op on d's worker, or here when it has none.
func (d *Decoder) run(op int) {
	d.op = op
	if d.w == nil {
		d.exec()
		return
	}
	d.w.do(d.j)
}

func (d *Decoder) exec() {
	switch d.op {
	case opProcess:
		d.rc = C.ps_process_raw(d.ps, (*C.int16)(unsafe.Pointer(&d.pcm[0])), C.size_t(len(d.pcm)), 0, 0)
	case opHypothesis:
		d.hyp = ""
		var score C.int32
		if h := C.ps_get_hyp(d.ps, &score); h != nil {
			d.hyp = strings.TrimSpace(C.GoString(h))
		}
	case opEnd:
		d.rc = C.ps_end_utt(d.ps)
	}
}

// tempFile writes text to a new temporary file and returns its name:
// pocketsphinx reads keyword lists and language models only from files.
func tempFile(pattern, text string) (string, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrDecoder, err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", fmt.Errorf("%w: %w", ErrDecoder, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("%w: %w", ErrDecoder, err)
	}
	return f.Name(), nil
}

// newSpotDecoder loads a decoder whose only search is the keyword search
// over phrases (SearchSpot), with gain control on its input.
func newSpotDecoder(cfg Config, phrases []Keyphrase) (*Decoder, error) {
	name, err := tempFile("vera-spot-*.kws", formatKeyphrases(phrases))
	if err != nil {
		return nil, err
	}
	defer os.Remove(name)
	hmm, dict, kws := C.CString(cfg.HMM), C.CString(cfg.Dict), C.CString(name)
	plp := C.CString(strconv.FormatFloat(cfg.Spot.PhoneLoop, 'e', -1, 64))
	defer C.free(unsafe.Pointer(hmm))
	defer C.free(unsafe.Pointer(dict))
	defer C.free(unsafe.Pointer(kws))
	defer C.free(unsafe.Pointer(plp))
	conf := C.vera_ps_spot_config(hmm, dict, kws, plp)
	if conf == nil {
		return nil, fmt.Errorf("%w: bad spotter configuration (hmm %q, dict %q)", ErrDecoder, cfg.HMM, cfg.Dict)
	}
	ps := C.ps_init(conf)
	if ps == nil {
		C.cmd_ln_free_r(conf)
		// A phrase with a word missing from the dictionary fails here too.
		return nil, fmt.Errorf("%w: cannot load the spotter (hmm %q, dict %q; every key-phrase word must be in the dictionary)", ErrDecoder, cfg.HMM, cfg.Dict)
	}
	d := &Decoder{ps: ps, conf: conf, search: SearchSpot, agc: newAGC(cfg.Spot.TargetDBFS), min: map[string]int32{}}
	for _, k := range phrases {
		d.min[k.Phrase] = k.MinScore
	}
	return d, nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func newDecoder(cfg Config) (*Decoder, error) {
	hmm, dict, lm := C.CString(cfg.HMM), C.CString(cfg.Dict), C.CString(cfg.LM)
	flat, best := C.CString(yesNo(cfg.FwdFlat)), C.CString(yesNo(cfg.BestPath))
	defer C.free(unsafe.Pointer(hmm))
	defer C.free(unsafe.Pointer(dict))
	defer C.free(unsafe.Pointer(lm))
	defer C.free(unsafe.Pointer(flat))
	defer C.free(unsafe.Pointer(best))
	conf := C.vera_ps_config(hmm, dict, lm, flat, best)
	if conf == nil {
		return nil, fmt.Errorf("%w: bad configuration (hmm %q, dict %q, lm %q)", ErrDecoder, cfg.HMM, cfg.Dict, cfg.LM)
	}
	ps := C.ps_init(conf)
	if ps == nil {
		C.cmd_ln_free_r(conf)
		return nil, fmt.Errorf("%w: cannot load models (hmm %q, dict %q, lm %q)", ErrDecoder, cfg.HMM, cfg.Dict, cfg.LM)
	}
	d := &Decoder{ps: ps, conf: conf, st: settling{after: cfg.SettleMs * 16}}
	if name := C.ps_get_search(ps); name != nil {
		d.lmName = C.GoString(name)
	}
	if cfg.KeyphraseFile != "" {
		name, file := C.CString(SearchKeyphrase), C.CString(cfg.KeyphraseFile)
		rc := C.ps_set_kws(ps, name, file)
		C.free(unsafe.Pointer(name))
		C.free(unsafe.Pointer(file))
		if rc < 0 {
			d.Close()
			return nil, fmt.Errorf("%w: keyphrase file %q rejected", ErrDecoder, cfg.KeyphraseFile)
		}
		d.kws = true
		// ps_set_kws leaves the LM search active; make it explicit.
		if err := d.setSearch(SearchLM); err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

func (d *Decoder) setSearch(search string) error {
	if search == d.search {
		return nil
	}
	if d.agc != nil || search == SearchSpot {
		return fmt.Errorf("%w: %q on a %s decoder", ErrNoSearch, search, map[bool]string{true: "spotter", false: "transcription"}[d.agc != nil])
	}
	name := d.lmName
	if search == SearchKeyphrase {
		if !d.kws {
			return ErrNoSearch
		}
		name = SearchKeyphrase
	} else if search != SearchLM {
		return fmt.Errorf("%w: %q", ErrNoSearch, search)
	}
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	if C.ps_set_search(d.ps, cs) < 0 {
		return fmt.Errorf("%w: set search %q", ErrDecoder, name)
	}
	d.search = search
	return nil
}

// Start begins an utterance on the given search (SearchLM or
// SearchKeyphrase). An utterance already in progress is ended first.
func (d *Decoder) Start(search string) error {
	if d.ps == nil {
		return ErrClosed
	}
	if d.inUtt && !d.st.settled {
		d.run(opEnd)
	}
	d.inUtt = false
	d.st.reset()
	if err := d.setSearch(search); err != nil {
		return err
	}
	if d.agc != nil {
		d.agc.reset()
	}
	if err := d.startUtt(); err != nil {
		return err
	}
	d.inUtt = true
	return nil
}

func (d *Decoder) startUtt() error {
	if C.ps_start_utt(d.ps) < 0 {
		return fmt.Errorf("%w: start utterance", ErrDecoder)
	}
	return nil
}

// Process feeds 16 kHz mono samples of the current utterance.
func (d *Decoder) Process(pcm []int16) error {
	if !d.inUtt {
		return fmt.Errorf("%w: process outside an utterance", ErrDecoder)
	}
	if d.agc != nil {
		return d.process(d.agc.process(pcm))
	}
	if d.st.after > 0 && d.search == SearchLM {
		return d.settleProcess(pcm)
	}
	return d.process(pcm)
}

func (d *Decoder) process(pcm []int16) error {
	if len(pcm) == 0 {
		return nil
	}
	d.pcm = pcm
	d.run(opProcess)
	d.pcm = nil
	if d.rc < 0 {
		return fmt.Errorf("%w: process %d samples", ErrDecoder, len(pcm))
	}
	return nil
}

// Hypothesis returns the current best hypothesis (a partial one during the
// utterance), or "" when there is none.
func (d *Decoder) Hypothesis() string {
	if d.ps == nil {
		return ""
	}
	if d.st.settled {
		return d.st.final
	}
	d.run(opHypothesis)
	return d.hyp
}

// End finishes the utterance and returns the final hypothesis.
func (d *Decoder) End() (string, error) {
	if !d.inUtt {
		return "", fmt.Errorf("%w: end outside an utterance", ErrDecoder)
	}
	if d.agc != nil {
		if err := d.process(d.agc.flush()); err != nil {
			d.Abort()
			return "", err
		}
	}
	d.inUtt = false
	if d.st.settled { // ended early, and nothing but quiet came since
		d.st.settled = false
		return d.st.final, nil
	}
	if d.run(opEnd); d.rc < 0 {
		return "", fmt.Errorf("%w: end utterance", ErrDecoder)
	}
	return d.Hypothesis(), nil
}

// Spots returns the key phrases a spotter detected in the last utterance
// (after End) at or above their MinScore, in time order; nil on a
// transcription decoder.
func (d *Decoder) Spots() []Spot {
	if d.ps == nil {
		return nil
	}
	var out []Spot
	for seg := C.ps_seg_iter(d.ps); seg != nil; seg = C.ps_seg_next(seg) {
		var sf, ef C.int
		var ascr, lscr, lback C.int32
		C.ps_seg_frames(seg, &sf, &ef)
		p := int32(C.ps_seg_prob(seg, &ascr, &lscr, &lback))
		w := strings.TrimSpace(C.GoString(C.ps_seg_word(seg)))
		if m, ok := d.min[w]; ok && p >= m {
			out = append(out, Spot{Phrase: w, Score: p, StartFrame: int(sf), EndFrame: int(ef)})
		}
	}
	return out
}

// Abort ends any utterance in progress and discards its result.
func (d *Decoder) Abort() {
	if d.ps != nil && d.inUtt && !d.st.settled {
		d.run(opEnd) // the search's last pass, as costly as a real end
	}
	d.inUtt = false
	d.st.settled = false
}

// Close frees the decoder. Safe to call twice.
func (d *Decoder) Close() {
	if d.ps != nil {
		C.ps_free(d.ps)
		d.ps = nil
	}
	if d.conf != nil {
		C.cmd_ln_free_r(d.conf)
		d.conf = nil
	}
}
