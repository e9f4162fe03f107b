// Package audio owns the gateway's internal PCM unit and its conversions.
//
// Invariants:
//   - Internal audio is 16 kHz, mono, signed 16-bit PCM ([]int16), moved in
//     frames of 10 ms (Frame10 = 160 samples) or 20 ms (Frame20 = 320 samples).
//   - One set of units: time inside the audio path is samples at SampleRate
//     (the sample clock); only the network side counts Opus's 48 kHz clock
//     (OpusRate: RTP timestamps and arrival ticks, Ogg granules). The
//     constants and conversions here are the only place either rate is
//     spelled out.
//   - A frame slice is owned by whoever allocated it. Functions in this tree
//     never retain a caller's slice after they return unless their doc says so;
//     callers must not keep a slice they received from a callee past the next
//     call on that callee (the callee reuses its buffers to stay allocation-free).
//   - Hot-path helpers here allocate nothing when the destination has enough
//     capacity; they report a sentinel error instead of panicking on bad sizes.
//
// Sub-packages: pipeline (the one inbound path: jitter buffer → decode →
// VAD → echo guard → turn detector → prefix ring), codec (Opus per stream),
// jitter (RTP jitter buffer), vad (pure-Go voice activity detector), turn
// (turn detector on sample time), resample (rate conversion for synthesised
// speech) and wavio (WAV and Ogg Opus I/O, the Opus TOC parser).
package audio
