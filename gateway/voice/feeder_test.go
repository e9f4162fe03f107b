package voice

import (
	"context"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway/router"
)

// TestFeederAbortDropsQueuedAudio: a hang-up while the recogniser is busy
// (here: waiting for the only decoder) must not feed it the queued audio;
// close, by contrast, recognises everything that was queued.
func TestFeederAbortDropsQueuedAudio(t *testing.T) {
	cfg := router.DefaultConfig()
	cfg.Sphinx.Pool = 1
	r, err := router.New(cfg, noEnv, router.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	const queued = 500 // 10 s of audio
	run := func(end func(*feeder)) int {
		hold, err := r.Listen(ctx, router.ListenRequest{Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		// Writing takes the only decoder, so the feeder's listen waits.
		if err := hold.Write(make([]int16, 320)); err != nil {
			t.Fatal(err)
		}
		f := newFeeder(ctx, r, router.ListenRequest{Language: "en"}, listenOptions{})
		for range queued {
			f.write(make([]int16, 320))
		}
		end(f)
		hold.Close()
		ls, err := f.result()
		if err != nil {
			t.Fatal(err)
		}
		ls.Close()
		return int(f.written.Load())
	}
	if n := run((*feeder).abort); n != 0 {
		t.Errorf("abort: %d queued frames reached the recogniser, want 0", n)
	}
	if n := run((*feeder).close); n != queued {
		t.Errorf("close: %d of %d queued frames reached the recogniser", n, queued)
	}
}

// TestHangUpDropsEndedTurnsBacklog: a turn that has ended (its feeder
// closed) while the recogniser is still seconds of audio behind must not
// hold up the hang-up: once the session's context ends, the rest of its
// queue is dropped (before the fix, Closed waited for every frame).
func TestHangUpDropsEndedTurnsBacklog(t *testing.T) {
	cfg := router.DefaultConfig()
	cfg.Sphinx.Pool = 1
	r, err := router.New(cfg, noEnv, router.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &voiceSession{ctx: ctx}
	hold, err := r.Listen(context.Background(), router.ListenRequest{Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if err := hold.Write(make([]int16, 320)); err != nil {
		t.Fatal(err)
	}
	const queued = 3000 // a minute of audio behind
	f := newFeeder(ctx, r, router.ListenRequest{Language: "en"}, listenOptions{})
	for range queued {
		f.write(make([]int16, 320))
	}
	f.close() // the turn ended
	stop := s.dropOnHangUp(f)
	defer stop()
	hold.Close() // the feeder gets the decoder and starts on its backlog
	for f.written.Load() == 0 {
		select {
		case <-f.done:
			t.Fatal("the feeder ended without writing")
		case <-time.After(time.Millisecond):
		}
	}
	cancel() // Closed: the session's context ends
	ls, err := f.result()
	if err != nil {
		t.Fatal(err)
	}
	ls.Close()
	if n := f.written.Load(); n >= queued {
		t.Errorf("%d of %d queued frames reached the recogniser after the hang-up, want the rest dropped", n, queued)
	}
}
