// VERA web client: chat over /v1/chat, voice over WebRTC, and a glasses HUD
// emulator that draws the display ops of safety cards and action prompts.
// No build step.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const token = params.get('token') || '';
  const MAX_CHARS = 8000;

  const state = {
    ws: null, sessionId: '', resumeToken: '', lastSeq: 0, device: $('profile').value,
    retry: 0, pendingSends: [], turns: new Map(), cards: new Map(), announced: new Set(),
    hud: null, acksSent: [], replying: '', events: [], voice: null,
    // actions: action id → {a, src, status}; prompt: the offered action's
    // prompt page on the glasses surface (kept while a safety card covers
    // it); closedCards: safety cards the server cleared; outcome: the
    // settled action's brief note on the HUD.
    actions: new Map(), prompt: null, closedCards: new Set(), outcome: null, keysSent: [], title: '',
    // cardOrder: safety card ids as they arrived; slots: each card's place
    // in the transcript, where it folds once acknowledged and superseded.
    cardOrder: [], slots: new Map(),
    // renegotiating: a device or region switch is in flight (its
    // session.created is not a resume); reconnecting: the socket dropped.
    renegotiating: false, reconnecting: false, replaced: false,
  };
  window.__vera = state; // inspected by the browser test

  // A token fixes the device; dev mode offers every profile (?device=).
  const bound = token ? tokenDevice(token) : '';
  if (bound || params.get('device')) {
    const want = bound || params.get('device');
    if ([...$('profile').options].some((o) => o.value === want)) { $('profile').value = want; state.device = want; }
  }
  if (bound) {
    for (const o of $('profile').options) o.disabled = o.value !== bound;
    $('device-note').textContent = `This page’s token is for ${deviceLabel(bound)}. Another device needs a token minted for it.`;
  }
  // Region names in the person's language; the codes are what is sent.
  try {
    const names = new Intl.DisplayNames([navigator.language || 'en'], { type: 'region' });
    for (const o of $('region').options) if (o.value && o.value !== 'XX') o.textContent = `${names.of(o.value)} (${o.value})`;
  } catch { /* the codes stay */ }
  state.region = params.get('region') || '';
  if (state.region) {
    if (![...$('region').options].some((o) => o.value === state.region)) $('region').append(new Option(state.region, state.region));
    $('region').value = state.region;
  }

  // ---- connection -------------------------------------------------------
  function status(text) { $('status').textContent = text; }

  // The token's device (a client token is bound to one): other devices need
  // a token minted for them, so the picker offers only this one.
  function tokenDevice(t) {
    try { return JSON.parse(atob(t.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))).dev || ''; } catch { return ''; }
  }

  function deviceLabel(id) {
    const o = [...$('profile').options].find((x) => x.value === id);
    return o ? o.textContent : id;
  }

  // Plain words for a closed connection; the code stays out of sight.
  function closeReason(code, opened) {
    if (!opened) return 'Can’t reach the gateway.';
    switch (code) {
      case 1001: return 'The gateway is restarting.';
      case 1008: return 'The connection was too slow for the gateway.';
      case 1009: return 'A message was too large to send.';
      default: return 'Connection lost.';
    }
  }

  function connect() {
    const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/v1/chat';
    const ws = new WebSocket(url, token ? ['vera.v1', token] : ['vera.v1']);
    state.ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      state.retry = 0;
      status('Connecting…');
      const hello = { type: 'hello', device: state.device };
      if (state.region) hello.region = state.region;
      if (state.resumeToken) { hello.resume_token = state.resumeToken; hello.last_seq = state.lastSeq; }
      send(hello);
    };
    ws.onmessage = (e) => {
      let ev;
      try { ev = JSON.parse(e.data); } catch { return; }
      handle(ev, 'chat');
    };
    ws.onclose = (e) => {
      if (state.ws !== ws) return;
      state.reconnecting = true;
      if (e.code === 4001) {
        // Another tab resumed this conversation: do not fight over it.
        state.replaced = true;
        status('This conversation is open in another tab or device.');
        $('reconnect').hidden = false;
        return;
      }
      const delay = Math.min(10000, 500 * 2 ** state.retry++);
      status(`${closeReason(e.code, opened)} Reconnecting in ${Math.max(1, Math.round(delay / 1000))} s…`);
      setTimeout(connect, delay);
    };
  }

  function send(obj, src) {
    const data = JSON.stringify(obj);
    if (src === 'voice') {
      // Voice events belong to the voice session: never to the websocket's.
      const dc = state.voice && state.voice.dc;
      if (!dc || dc.readyState !== 'open') return false;
      dc.send(data);
      return true;
    }
    if (state.ws && state.ws.readyState === WebSocket.OPEN) { state.ws.send(data); return true; }
    return false;
  }

  // ---- events -----------------------------------------------------------
  function handle(ev, src) {
    state.events.push({ type: ev.type, seq: ev.seq, src, resumed: ev.resumed === true, turn_id: ev.turn_id, kind: ev.kind, t: Math.round(performance.now()) });
    if (src === 'chat' && ev.seq > state.lastSeq) state.lastSeq = ev.seq;
    if (src === 'voice' && ev.turn_id) {
      // Voice turns live in their own session: keep their ids apart from
      // the chat session's, and remember the id the server knows.
      const wire = ev.turn_id;
      ev = { ...ev, turn_id: 'voice-' + wire };
      const t = turn(ev.turn_id);
      t.wire = wire;
      t.src = 'voice';
    }
    switch (ev.type) {
      case 'session.created': return onCreated(ev, src);
      case 'session.title': if (src === 'chat') setTitle(ev.title); return;
      case 'notice': return onNotice(ev);
      case 'input.speech_started': caption('You', '…'); return;
      // Latency counts from the true end of speech: the detector ended the
      // turn end_of_turn_ms after the person stopped speaking.
      case 'input.speech_stopped': turn(ev.turn_id).t0 = performance.now() - (ev.end_of_turn_ms || 0); turn(ev.turn_id).voice = true; return;
      case 'transcript.partial': caption('You', ev.text); return;
      case 'transcript.final': return onUserText(ev, src);
      case 'reply.delta': return onDelta(ev);
      case 'reply.done': return onDone(ev);
      case 'reply.interrupted': return onInterrupted(ev);
      case 'reply.audio_started': return onAudioStarted(ev);
      case 'reply.audio_stopped': turn(ev.turn_id).audioStopped = performance.now(); return;
      case 'caption': caption(ev.speaker === 'vera' ? 'VERA' : 'You', ev.text); return;
      case 'safety.card': return onSafetyCard(ev, src);
      case 'display.card': return onDisplayCard(ev, src);
      case 'display.clear': return onDisplayClear(ev);
      case 'action.proposed': return onAction(ev, src);
      case 'action.updated': return onActionUpdated(ev);
      case 'error': return onError(ev, src);
      default: return;
    }
  }

  function onCreated(ev, src) {
    if (src !== 'chat') return;
    if (state.sessionId && ev.session_id !== state.sessionId) resetConversation();
    state.sessionId = ev.session_id;
    state.resumeToken = ev.resume_token;
    state.device = ev.device;
    if ($('profile').value !== ev.device) $('profile').value = ev.device;
    setTitle(ev.title || '');
    // A device or region switch answers with session.created too: that is
    // not a resume. Only a dropped connection that came back says so.
    const back = ev.resumed && state.reconnecting && !state.renegotiating;
    state.renegotiating = false;
    state.reconnecting = false;
    status(`Connected · ${deviceLabel(ev.device)}${back ? ' · reconnected, nothing missed' : ''}`);
  }

  function resetConversation() {
    $('transcript').textContent = '';
    $('cards').textContent = '';
    state.cardOrder = [];
    state.slots.clear();
    $('actions').textContent = '';
    state.turns.clear();
    state.cards.clear();
    state.actions.clear();
    state.prompt = null;
    state.closedCards.clear();
    state.outcome = null;
    setTitle('');
    clearHud();
  }

  function onNotice(ev) {
    if (ev.kind === 'ai_disclosure') {
      $('notice').textContent = ev.text;
      $('notice').hidden = false;
      return;
    }
    system(ev.text);
  }

  function turn(id) {
    if (!state.turns.has(id)) {
      state.turns.set(id, { id, wire: id, src: 'chat', t0: 0, first: 0, done: 0, audio: 0, audioEvent: 0, audioStopped: 0,
        peak: 0, voice: false, el: null, text: '', heardText: '' });
    }
    return state.turns.get(id);
  }

  function bubble(who, cls, text) {
    const li = document.createElement('li');
    li.className = cls;
    const w = document.createElement('span');
    w.className = 'who';
    w.textContent = who;
    const body = document.createElement('span');
    body.className = 'body';
    body.textContent = text;
    li.append(w, body);
    $('transcript').append(li);
    li.scrollIntoView({ block: 'nearest' });
    return li;
  }

  function system(text) { return bubble('Notice', 'vera', text); }

  function onUserText(ev, src) {
    const t = turn(ev.turn_id);
    if (!t.t0) t.t0 = (src === 'chat' && state.pendingSends.shift()) || performance.now();
    t.heardText = ev.text;
    bubble('You', 'user', ev.text);
    state.replying = ev.turn_id;
    $('stop').hidden = false;
  }

  function veraBubble(t) {
    if (!t.el) t.el = bubble('VERA', 'vera', '');
    return t.el;
  }

  function onDelta(ev) {
    const t = turn(ev.turn_id);
    if (!t.first) t.first = performance.now();
    t.text += ev.delta;
    veraBubble(t).querySelector('.body').textContent = t.text;
  }

  function onDone(ev) {
    const t = turn(ev.turn_id);
    t.done = performance.now();
    t.text = ev.text;
    veraBubble(t).querySelector('.body').textContent = ev.text;
    t.ended = true;
    if (state.replying === ev.turn_id) { state.replying = ''; $('stop').hidden = true; }
    latency(t);
  }

  function onInterrupted(ev) {
    const t = turn(ev.turn_id);
    const el = veraBubble(t);
    el.querySelector('.body').textContent = ev.heard;
    el.classList.add('interrupted');
    t.ended = true;
    if (state.replying === ev.turn_id) { state.replying = ''; $('stop').hidden = true; }
  }

  // The server says reply audio started; the page hears it when the remote
  // track carries energy (meter). Without WebAudio the event stands in.
  function onAudioStarted(ev) {
    const t = turn(ev.turn_id);
    if (!t.audioEvent) t.audioEvent = performance.now();
    if (t.src === 'voice' && !(state.voice && state.voice.analyser)) heard(t, t.audioEvent, 0);
    latency(t);
  }

  function heard(t, at, rms) {
    if (t.audio) return;
    t.audio = at;
    t.peak = Math.max(t.peak, rms);
    send({ type: 'playback.started', turn_id: t.wire }, 'voice');
    latency(t);
  }

  function latency(t) {
    if (!t.t0) return;
    let li = document.getElementById('lat-' + t.id);
    if (!li) {
      li = document.createElement('li');
      li.id = 'lat-' + t.id;
      $('latency').append(li);
    }
    const ms = (x) => (x ? Math.round(x - t.t0) + ' ms' : '–');
    const parts = [];
    if (t.voice) {
      parts.push(['end of speech → first audio', ms(t.audio)]);
      if (t.audioEvent) parts.push(['reply.audio_started', ms(t.audioEvent)]);
    }
    parts.push(['first text', ms(t.first)], ['done', ms(t.done)]);
    // Built from nodes: turn ids come from the server.
    li.textContent = (t.src === 'voice' ? 'voice ' + t.wire : t.id) + ': ';
    parts.forEach(([label, value], i) => {
      const b = document.createElement('b');
      b.textContent = value;
      li.append((i ? ', ' : '') + label + ' ', b);
    });
  }

  function caption(who, text) { $('caption').textContent = `${who}: ${text}`; }

  function onError(ev, src) {
    const e = ev.error || {};
    if (e.event_type === 'hello' && state.resumeToken && (e.type === 'not_found' || e.type === 'conflict')) {
      // The session expired or the replay is too old: start afresh.
      state.resumeToken = '';
      state.lastSeq = 0;
      resetConversation();
      system('The earlier conversation had ended; this is a new one.');
      send({ type: 'hello', device: state.device, ...(state.region ? { region: state.region } : {}) }, src);
      return;
    }
    if (e.event_type === 'hello' && e.type === 'permission_error' && state.renegotiating) {
      // A token is bound to one device: put the picker back.
      state.renegotiating = false;
      $('profile').value = state.confirmedDevice || $('profile').value;
      state.device = $('profile').value;
    }
    const li = system(readable(e));
    if (li && e.message) li.title = `${e.type}: ${e.message}`;
  }

  // readable turns an error event into a sentence for the person; the
  // gateway's own message stays in the bubble's tooltip.
  function readable(e) {
    switch (e.type) {
      case 'rate_limited': return 'You are sending quickly. Wait a moment, then try again.';
      case 'permission_error': return e.event_type === 'hello'
        ? 'This page’s token is for another device. Switching devices needs a token minted for that device.'
        : 'That isn’t allowed with this page’s credentials.';
      case 'not_found': return 'That card or action is no longer there.';
      case 'unavailable': return 'The gateway is busy right now. Try again in a moment.';
      case 'engine_unavailable': return 'VERA couldn’t answer just now. Try again in a moment.';
      case 'invalid_request': return e.field === 'text' ? `That message is too long (at most ${MAX_CHARS} characters).`
        : 'The gateway couldn’t read that. Try again.';
      default: return 'Something went wrong. Try again.';
    }
  }

  // ---- safety cards -----------------------------------------------------
  function actionHref(a) {
    const digits = String(a.value).replace(/[^0-9+]/g, '');
    if (a.type === 'call') return 'tel:' + digits;
    if (a.type === 'text') return 'sms:' + digits;
    if (/^https?:\/\//.test(a.value)) return a.value;
    return '';
  }

  function onSafetyCard(ev, src) {
    const prev = state.cards.get(ev.card_id);
    state.cards.set(ev.card_id, ev);
    let box = document.getElementById('card-' + ev.card_id);
    if (!box) {
      box = document.createElement('section');
      box.id = 'card-' + ev.card_id;
      box.className = 'safety';
      box.setAttribute('aria-label', 'Safety resources');
      $('cards').prepend(box);
      // Its place in the conversation, where it folds once superseded.
      const slot = document.createElement('li');
      slot.className = 'card-slot';
      slot.hidden = true;
      $('transcript').append(slot);
      state.slots.set(ev.card_id, slot);
      state.cardOrder.push(ev.card_id);
    }
    box.textContent = '';
    const h = document.createElement('h3');
    h.textContent = ev.level === 'crisis' ? 'You deserve support right now' : 'Support is available';
    const ul = document.createElement('ul');
    const spoken = [];
    for (const r of ev.resources) {
      const li = document.createElement('li');
      const name = document.createElement('strong');
      name.textContent = r.name;
      li.append(name);
      const said = [r.name];
      for (const a of r.actions || []) {
        li.append(document.createTextNode(' · '));
        const href = actionHref(a);
        const link = document.createElement(href ? 'a' : 'span');
        if (href) { link.href = href; if (a.type === 'url' || a.type === 'chat') link.rel = 'noopener'; }
        const label = a.label || a.type;
        const bare = String(a.value).replace(/^https?:\/\/(www\.)?/i, '').replace(/\/$/, '').toLowerCase();
        link.textContent = label.includes(a.value) || label.toLowerCase().includes(bare) ? label : `${label} ${a.value}`;
        li.append(link);
        said.push(`${a.label || a.type} ${a.value}`);
      }
      if (r.hours) li.append(document.createTextNode(' · ' + r.hours));
      if (r.description) { const d = document.createElement('div'); d.textContent = r.description; li.append(d); }
      ul.append(li);
      spoken.push(said.join(', '));
    }
    const acks = document.createElement('p');
    acks.className = 'acks';
    acks.id = 'acks-' + ev.card_id;
    box.append(h, ul, acks);
    tidyCards();
    // Announced once per card, however often it is re-sent.
    if (!state.announced.has(ev.card_id)) {
      state.announced.add(ev.card_id);
      $('announce').textContent = 'Safety resources. ' + spoken.join('. ') + '.';
    }
    const surf = hudSurface(ev);
    if (!surf) {
      // No pages to draw (the structured card above still shows every
      // resource), but the card is on the glasses: a prompt does not stay
      // over it. It waits, as it does behind a drawn card.
      if (state.hud && state.hud.kind === 'prompt' && (ev.surfaces || []).some((s) => s.surface === state.hud.surf.surface)) clearHud();
      return;
    }
    const keepPage = prev && state.hud && state.hud.card.card_id === ev.card_id ? state.hud.page : 1;
    showHud(ev, surf, keepPage, src, ev.resend > 0);
  }

  // tidyCards keeps the newest card, and every required card not yet
  // acknowledged (closed with Done on the glasses), pinned above the
  // conversation; the others fold into the transcript where they arrived,
  // one click from open.
  function tidyCards() {
    const latest = state.cardOrder[state.cardOrder.length - 1];
    for (const id of state.cardOrder) {
      const card = state.cards.get(id);
      const box = document.getElementById('card-' + id);
      const slot = state.slots.get(id);
      if (!card || !box || !slot) continue;
      const acknowledged = state.closedCards.has(id) || card.requires_ack === false;
      if (id === latest || !acknowledged) {
        if (box.parentElement !== $('cards')) { $('cards').prepend(box); slot.hidden = true; slot.textContent = ''; }
        continue;
      }
      if (slot.contains(box)) continue;
      const fold = document.createElement('details');
      fold.className = 'card-fold';
      const summary = document.createElement('summary');
      summary.textContent = 'Safety resources shown earlier: ' + (card.resources || []).map((r) => r.name).join(', ');
      fold.append(summary, box);
      slot.replaceChildren(fold);
      slot.hidden = false;
    }
  }

  function hudSurface(card) {
    return (card.surfaces || []).find((s) => (s.pages || []).length > 0) || null;
  }

  // display.card: a page of a safety card (the answer to a key) or the
  // offered action's approve/decline prompt, both laid out by the server.
  function onDisplayCard(ev, src) {
    if (ev.kind === 'prompt') return onPromptCard(ev, src);
    const card = state.cards.get(ev.card_id);
    if (!card) return;
    const surf = (card.surfaces || []).find((s) => s.surface === ev.surface);
    if (surf) showHud(card, surf, ev.page.n, src, false);
  }

  // A prompt never covers a safety card: while one is on the HUD the
  // prompt only waits here (the server shows it again once the person has
  // closed the card). Prompt pages are not acknowledged: display.ack is for
  // safety cards only.
  function onPromptCard(ev, src) {
    if (!ev.page || !(ev.page.ops || []).length) return;
    const actionId = String(ev.card_id).replace(/^prompt_/, '');
    const act = state.actions.get(actionId);
    if (act && act.status !== 'proposed') return; // settled meanwhile
    const laid = act && act.surfaces.find((s) => s.surface === ev.surface);
    const canvas = $('hud-canvas');
    state.prompt = { card_id: ev.card_id, action_id: actionId, surface: ev.surface, page: ev.page, src,
      profile: laid ? laid.profile : state.device, width: laid ? laid.width : canvas.width,
      height: laid ? laid.height : canvas.height };
    if (state.hud && state.hud.kind === 'safety') return;
    showPrompt(state.prompt);
  }

  function showPrompt(p) {
    state.outcome = null;
    state.hud = { kind: 'prompt', card: { card_id: p.card_id }, action_id: p.action_id, prompt: p.page, page: p.page.n,
      surf: { surface: p.surface, profile: p.profile, width: p.width, height: p.height }, focus: -1, src: p.src,
      seen: new Set() };
    drawHud();
  }

  function onDisplayClear(ev) {
    const id = ev.card_id || '';
    if (state.prompt && (!id || id === state.prompt.card_id)) state.prompt = null;
    else if (id) {
      state.closedCards.add(id);
      const acks = document.getElementById('acks-' + id);
      if (acks) acks.textContent = 'Closed on the glasses with Done after every page was shown.';
      tidyCards();
    }
    if (state.hud && (!id || id === state.hud.card.card_id)) clearHud();
  }

  // ---- HUD emulator -----------------------------------------------------
  function showHud(card, surf, page, src, reack) {
    if (!state.hud || state.hud.kind !== 'safety' || state.hud.card.card_id !== card.card_id || reack) {
      state.hud = { kind: 'safety', card, surf, page: 1, focus: -1, src, seen: new Set() };
    }
    state.outcome = null;
    state.hud.card = card;
    state.hud.surf = surf;
    state.hud.page = Math.min(Math.max(page, 1), surf.pages.length);
    drawHud();
  }

  function clearHud() {
    state.hud = null;
    drawHud();
  }

  function roundRect(ctx, x, y, w, h, r) {
    ctx.beginPath();
    if (ctx.roundRect) ctx.roundRect(x, y, w, h, r || 0); else ctx.rect(x, y, w, h);
  }

  const HUD_FONT = '"Go", "DejaVu Sans", system-ui, sans-serif';
  // The HUD's focus ring (checked for contrast against the button fills).
  const FOCUS_RING = '#8AB4F8';
  // Outcome note colours on its #1A1B1F panel: settled well, or not done.
  const OUTCOME_OK = '#A8E6B0';
  const OUTCOME_NO = '#FFB4A9';

  function drawHud() {
    const canvas = $('hud-canvas');
    const ctx = canvas.getContext('2d');
    const hudEl = $('hud');
    const h = state.hud;
    if (!h) {
      ctx.fillStyle = '#000';
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      hudEl.dataset.page = '';
      hudEl.dataset.kind = state.outcome ? 'outcome' : '';
      $('hud-text').textContent = state.outcome ? `${state.outcome.text}: ${state.outcome.title}` : 'Glasses display is clear.';
      if (state.outcome) drawOutcome(ctx, canvas.width, canvas.height, state.outcome);
      window.__hud = state.outcome ? { kind: 'outcome', text: state.outcome.text, status: state.outcome.status } : null;
      return;
    }
    const s = h.surf;
    canvas.width = s.width;
    canvas.height = s.height;
    const p = hudPage();
    const ctl = p.controls || [];
    if (h.kind === 'prompt') h.focus = ctl.findIndex((c) => c.id === p.focus); // the server owns a prompt's focus
    else if (h.focus < 0 || h.focus >= ctl.length) h.focus = Math.max(ctl.findIndex((c) => c.id === p.focus), ctl.length ? 0 : -1);
    const focusId = h.focus >= 0 ? ctl[h.focus].id : '';
    ctx.fillStyle = '#000'; // black is transparent on the glasses
    ctx.fillRect(0, 0, s.width, s.height);
    for (const op of p.ops || []) {
      if (op.op === 'panel') {
        ctx.fillStyle = op.fill || '#1A1B1F';
        roundRect(ctx, op.x, op.y, op.w, op.h, op.r);
        ctx.fill();
      } else if (op.op === 'text') {
        ctx.font = `${op.bold ? 700 : 400} ${op.px || 28}px ${HUD_FONT}`;
        ctx.fillStyle = op.color || '#FFFFFF';
        ctx.textAlign = 'left';
        ctx.textBaseline = 'alphabetic';
        ctx.fillText(op.text || '', op.x, op.y);
      } else if (op.op === 'button') {
        ctx.fillStyle = op.fill || '#2B2F38';
        roundRect(ctx, op.x, op.y, op.w, op.h, op.r);
        ctx.fill();
        if (op.id ? op.id === focusId : op.focus) {
          ctx.strokeStyle = FOCUS_RING;
          ctx.lineWidth = 4;
          roundRect(ctx, op.x - 3, op.y - 3, op.w + 6, op.h + 6, (op.r || 0) + 3);
          ctx.stroke();
        }
        ctx.font = `700 ${op.px || 28}px ${HUD_FONT}`;
        ctx.fillStyle = op.color || '#F1F3F4';
        ctx.textAlign = 'center';
        ctx.textBaseline = 'middle';
        ctx.fillText(op.text || '', op.x + op.w / 2, op.y + op.h / 2);
      }
    }
    const indicator = `${p.n}/${p.of}`;
    hudEl.dataset.page = indicator;
    hudEl.dataset.kind = h.kind;
    const focused = h.focus >= 0 ? ` Focused: ${ctl[h.focus].label}.` : '';
    $('hud-text').textContent = `${p.title} ${indicator}. ${(p.lines || []).join(' ')}${focused}`;
    window.__hud = { kind: h.kind, card_id: h.card.card_id, surface: s.surface, profile: s.profile, page: p.n, of: p.of,
      focus: focusId, controls: ctl.map((c) => c.id), indicator, title: p.title, lines: (p.lines || []).slice(),
      ops: (p.ops || []).length, width: s.width, height: s.height };
    if (h.kind === 'safety' && !h.seen.has(p.n)) {
      h.seen.add(p.n);
      const ack = { type: 'display.ack', card_id: h.card.card_id, page: p.n, surface: s.surface };
      if (send(ack, h.src)) state.acksSent.push(ack);
      const el = document.getElementById('acks-' + h.card.card_id);
      if (el) el.textContent = `Shown on the glasses: page ${[...h.seen].sort((a, b) => a - b).join(', ')} of ${p.of}`;
    }
  }

  // drawOutcome draws a settled action's brief note on a dark panel inside
  // the 24 px safe inset: the outcome in bold, then the action's title
  // wrapped to the panel (whole words; a word wider than the panel alone
  // on its line).
  function drawOutcome(ctx, w, h, o) {
    const m = Math.min(24, Math.round(w / 25));
    const big = Math.max(16, Math.min(32, Math.floor(h / 5)));
    const small = Math.max(14, Math.min(24, Math.floor(h / 7)));
    const lh = Math.round(small * 1.35);
    ctx.font = `400 ${small}px ${HUD_FONT}`;
    const lines = [];
    for (const word of String(o.title || '').split(/\s+/).filter(Boolean)) {
      const cur = lines.length ? lines[lines.length - 1] + ' ' + word : '';
      if (cur && ctx.measureText(cur).width <= w - 4 * m) lines[lines.length - 1] = cur;
      else lines.push(word);
    }
    const maxLines = Math.max(0, Math.floor((h - 2 * m - 2 * m - big * 1.4) / lh));
    const shown = lines.slice(0, maxLines);
    const ph = Math.min(h - 2 * m, Math.round(2 * m + big * 1.4 + shown.length * lh));
    const y = Math.round((h - ph) / 2);
    ctx.fillStyle = '#1A1B1F';
    roundRect(ctx, m, y, w - 2 * m, ph, m);
    ctx.fill();
    ctx.textAlign = 'left';
    ctx.textBaseline = 'alphabetic';
    ctx.font = `700 ${big}px ${HUD_FONT}`;
    ctx.fillStyle = o.good ? OUTCOME_OK : OUTCOME_NO;
    ctx.fillText(o.text, 2 * m, y + m + big);
    ctx.font = `400 ${small}px ${HUD_FONT}`;
    ctx.fillStyle = '#FFFFFF';
    shown.forEach((l, i) => ctx.fillText(l, 2 * m, y + m + big * 1.4 + (i + 1) * lh - (lh - small) / 2));
  }

  // Keys on a safety card map exactly as the glasses package's pager maps a
  // Meta web app's keys: ←/→ move focus in the control row (page when there
  // is none), ↓/↑ page, Enter/Space select the focused control,
  // Escape/Backspace go back a page. A safety card is sticky: back on page
  // 1 keeps it; only Done on the last page closes it. Keys on a prompt go
  // to the server (promptKey).
  function hudKey(e) {
    const h = state.hud;
    if (!h) return;
    if (h.kind === 'prompt') {
      if (promptKey(e.key)) e.preventDefault();
      return;
    }
    const ctl = hudPage().controls || [];
    let handled = true;
    switch (e.key) {
      case 'ArrowRight':
        if (!ctl.length) goTo(h.page + 1); else setFocus(Math.min(h.focus + 1, ctl.length - 1));
        break;
      case 'ArrowLeft':
        if (!ctl.length) goTo(h.page - 1); else setFocus(Math.max(h.focus - 1, 0));
        break;
      case 'ArrowDown': case 'PageDown': goTo(h.page + 1); break;
      case 'ArrowUp': case 'PageUp': goTo(h.page - 1); break;
      case 'Enter': case ' ': selectFocused(); break;
      case 'Escape': case 'Backspace': if (h.page > 1) goTo(h.page - 1); break;
      default: handled = false;
    }
    if (handled) e.preventDefault();
  }

  // promptKey sends a key on the prompt to the server as input.key: the
  // server owns the prompt's page and focus and decides (focus starts on
  // Decline, so a stray Enter never approves). On the decision page the
  // server's next/prev toggle the focus; ← and → are sent only towards a
  // control that is there, so they read as left and right, and ↑ goes
  // back a page. Returns whether the key belongs to the HUD.
  function promptKey(k) {
    const h = state.hud;
    const p = h.prompt;
    const ctl = p.controls || [];
    const decision = ctl.some((c) => c.id === 'approve');
    const at = ctl.findIndex((c) => c.id === p.focus);
    let key = '';
    switch (k) {
      case 'ArrowRight': key = !decision || at < ctl.length - 1 ? 'next' : ''; break;
      case 'ArrowLeft': key = !decision || at > 0 ? 'prev' : ''; break;
      case 'ArrowDown': case 'PageDown': key = decision ? '' : 'next'; break;
      case 'ArrowUp': case 'PageUp': key = !decision ? 'prev' : p.n > 1 ? 'back' : ''; break;
      case 'Enter': case ' ': key = 'select'; break;
      case 'Escape': case 'Backspace': key = 'back'; break;
      default: return false;
    }
    if (key) sendKey(key, h.surf.surface, h.src);
    return true;
  }

  function sendKey(key, surface, src) {
    const ev = { type: 'input.key', key, surface };
    if (send(ev, src)) state.keysSent.push(ev);
  }

  function hudPage() {
    const h = state.hud;
    return h.kind === 'prompt' ? h.prompt : h.surf.pages[h.page - 1];
  }

  function goTo(n) {
    const h = state.hud;
    if (n < 1 || n > h.surf.pages.length || n === h.page) return;
    h.page = n;
    h.focus = -1;
    drawHud();
  }

  function setFocus(i) {
    if (i === state.hud.focus) return;
    state.hud.focus = i;
    drawHud();
  }

  function selectFocused() {
    const h = state.hud;
    const ctl = hudPage().controls || [];
    const last = h.page === h.surf.pages.length;
    if (h.focus < 0 || h.focus >= ctl.length) {
      if (!last) goTo(h.page + 1); else closeSafety();
      return;
    }
    const c = ctl[h.focus];
    if (c.id === 'next') { goTo(h.page + 1); return; }
    if (c.id === 'done') { closeSafety(); return; }
    // A resource link ("call:us-988"): the phone places the call or opens it.
    $('voice-note').textContent = `${c.label}: opens on your phone.`;
  }

  // closeSafety closes the card the person finished (Done on its last
  // page) and tells the server with the same key, so that it clears the
  // card there too and shows the prompt that waited behind it. Every page
  // shown was acknowledged, so the server is on the last page as well.
  function closeSafety() {
    const h = state.hud;
    clearHud();
    if (!state.closedCards.has(h.card.card_id)) sendKey('select', h.surf.surface, h.src);
  }

  // ---- actions ----------------------------------------------------------
  // The phone/browser panel shows each proposed action with its own
  // Approve and Decline buttons (a tap settles any pending action, offered
  // or not); the glasses get the server's prompt pages (display.card).
  const OUTCOME_MS = 5000;
  const OUTCOMES = { approved: 'Approved', declined: 'Declined', expired: 'Expired, not done', failed: "Didn't go through",
    succeeded: 'Done' };
  const VIA = { tap: 'tapped', key: 'key on the glasses', speech: 'spoken answer', text: 'typed answer',
    expiry: 'no answer in time', hangup: 'the session ended' };

  // The surface a tap comes from, for the audit trail: the page stands for
  // the phone's companion app unless it is the browser profile itself.
  function tapSurface() { return state.device === 'browser' ? 'browser' : 'phone'; }

  function actionTitle(a) { return a.title || 'Go ahead?'; }

  function onAction(ev, src) {
    const a = ev.action;
    if (!a || !a.id || state.actions.has(a.id)) return;
    const act = { a, src, status: a.status || 'proposed', surfaces: ev.surfaces || [] };
    state.actions.set(a.id, act);
    const box = actionBox(act);
    const row = document.createElement('div');
    row.className = 'choices';
    const ok = document.createElement('button');
    ok.type = 'button';
    ok.className = 'approve';
    ok.textContent = 'Approve';
    ok.setAttribute('aria-label', 'Approve: ' + actionTitle(a));
    const no = document.createElement('button');
    no.type = 'button';
    no.className = 'decline';
    no.textContent = 'Decline';
    no.setAttribute('aria-label', 'Decline: ' + actionTitle(a));
    const decide = (approve) => {
      const msg = { type: approve ? 'action.approve' : 'action.decline', action_id: a.id, surface: tapSurface() };
      const st = box.querySelector('.state');
      if (!send(msg, src)) { st.textContent = 'Not connected; nothing was decided. Try again.'; return; }
      // Disabled buttons drop the focus: keep it in the action's panel.
      if (box.contains(document.activeElement)) box.focus();
      ok.disabled = no.disabled = true;
      st.textContent = approve ? 'Approving…' : 'Declining…';
    };
    ok.addEventListener('click', () => decide(true));
    no.addEventListener('click', () => decide(false));
    row.append(ok, no);
    box.querySelector('.state').before(row);
    $('announce-polite').textContent = `VERA proposes: ${actionTitle(a)}. Approve or decline.`;
  }

  function actionBox(act) {
    const a = act.a;
    const box = document.createElement('section');
    box.className = 'action';
    box.id = 'action-' + a.id;
    box.tabIndex = -1;
    box.setAttribute('aria-labelledby', 'action-h-' + a.id);
    const h = document.createElement('h3');
    h.id = 'action-h-' + a.id;
    h.textContent = actionTitle(a);
    const p = document.createElement('p');
    p.className = 'summary';
    p.textContent = a.summary || '';
    const st = document.createElement('p');
    st.className = 'state';
    st.setAttribute('role', 'status');
    box.append(h, p, st);
    $('actions').append(box);
    return box;
  }

  // action.updated takes the prompt off every surface and shows the
  // outcome briefly: in the action's panel (its buttons go) and, unless a
  // safety card or another prompt is there, on the glasses.
  function onActionUpdated(ev) {
    const act = state.actions.get(ev.action_id);
    if (!act) return;
    act.status = ev.status;
    const text = OUTCOMES[ev.status] || ev.status;
    const good = ev.status === 'approved' || ev.status === 'succeeded';
    const promptId = 'prompt_' + ev.action_id;
    if (state.prompt && state.prompt.card_id === promptId) state.prompt = null;
    const h = state.hud;
    if (!h || (h.kind === 'prompt' && h.card.card_id === promptId)) {
      const o = { text, title: actionTitle(act.a), status: ev.status, good };
      state.hud = null;
      state.outcome = o;
      drawHud();
      setTimeout(() => {
        if (state.outcome !== o) return;
        state.outcome = null;
        if (!state.hud) drawHud();
      }, OUTCOME_MS);
    }
    let box = document.getElementById('action-' + ev.action_id);
    if (!box) box = actionBox(act); // a later result of a settled action
    const hadFocus = box.contains(document.activeElement);
    box.querySelectorAll('.choices').forEach((r) => r.remove());
    box.classList.add('settled');
    box.classList.toggle('good', good);
    box.querySelector('.state').textContent = text + (ev.via && VIA[ev.via] ? ` (${VIA[ev.via]})` : '');
    if (hadFocus) box.focus();
    clearTimeout(act.timer);
    act.timer = setTimeout(() => {
      const focused = box.contains(document.activeElement);
      box.remove();
      if (focused) $('message').focus();
    }, OUTCOME_MS);
  }

  // ---- session title ----------------------------------------------------
  function setTitle(title) {
    state.title = title || '';
    const el = $('session-title');
    el.textContent = state.title || 'New conversation';
    el.classList.toggle('untitled', !state.title);
    document.title = state.title ? `${state.title} · VERA` : 'VERA';
  }

  function openRename(open) {
    $('rename-form').hidden = !open;
    $('rename').hidden = open;
    $('rename').setAttribute('aria-expanded', open ? 'true' : 'false');
    if (open) {
      $('rename-input').value = state.title;
      $('rename-input').focus();
      $('rename-input').select();
    } else {
      $('rename').focus();
    }
  }

  $('rename').addEventListener('click', () => openRename(true));
  $('rename-cancel').addEventListener('click', () => openRename(false));
  $('rename-form').addEventListener('keydown', (e) => { if (e.key === 'Escape') { e.preventDefault(); openRename(false); } });
  $('rename-form').addEventListener('submit', (e) => {
    e.preventDefault();
    // An empty title clears the name; the server answers with session.title.
    if (!send({ type: 'session.rename', title: $('rename-input').value.trim() })) {
      system('Not connected yet; the title was not changed.');
      return;
    }
    openRename(false);
  });

  // ---- composer ---------------------------------------------------------
  $('composer').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = $('message').value.trim();
    if (!text) return;
    if ([...text].length > MAX_CHARS) { system(`Messages are limited to ${MAX_CHARS} characters.`); return; }
    if (!send({ type: 'input.text', text })) { system('Not connected yet; your message was not sent.'); return; }
    state.pendingSends.push(performance.now());
    $('message').value = '';
  });
  $('message').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); $('composer').requestSubmit(); }
  });
  $('stop').addEventListener('click', () => {
    const t = state.replying ? state.turns.get(state.replying) : null;
    if (t) send({ type: 'response.cancel', turn_id: t.wire }, t.src);
    else send({ type: 'response.cancel' });
  });
  // A device or region switch is a hello on the live connection: the
  // session re-negotiates and answers with session.created (not a resume).
  function renegotiate() {
    state.renegotiating = true;
    const hello = { type: 'hello', device: state.device };
    if (state.region) hello.region = state.region;
    if (!send(hello)) { state.renegotiating = false; system('Not connected yet; the switch applies when the connection is back.'); }
  }
  $('profile').addEventListener('change', () => {
    state.confirmedDevice = state.device;
    state.device = $('profile').value;
    // The prompt was laid out for the old display; the server lays out the
    // next one for the new device.
    state.prompt = null;
    clearHud();
    renegotiate();
  });
  $('region').addEventListener('change', () => {
    state.region = $('region').value;
    // The gateway keeps a region once set: there is no way back to automatic.
    const auto = $('region').querySelector('option[value=""]');
    if (auto) auto.disabled = true;
    renegotiate();
  });
  $('reconnect').addEventListener('click', () => {
    state.replaced = false;
    $('reconnect').hidden = true;
    connect();
  });
  $('hud').addEventListener('keydown', hudKey);

  // ---- voice (WebRTC to POST /v1/voice/sessions) -------------------------
  // One RTCPeerConnection per conversation: the microphone goes up, VERA's
  // voice comes down, and the ordered data channel "events" carries the same
  // events as the websocket, handled by the same code. The offer is sent
  // once ICE gathering is complete (no trickle).

  // Remote audio at or above this RMS (about −40 dBFS) counts as VERA heard.
  const HEARD_RMS = 0.01;
  const METER_MS = 20;
  // Reply audio reaches the speaker a little after reply.audio_stopped
  // leaves the server (jitter buffer, playout); energy this late still counts.
  const TAIL_MS = 400;

  function iceComplete(pc, ms) {
    if (pc.iceGatheringState === 'complete') return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      pc.addEventListener('icegatheringstatechange', () => {
        if (pc.iceGatheringState === 'complete') { clearTimeout(t); resolve(); }
      });
    });
  }

  // ---- STUN/TURN servers (RFC 9725 §4.6) ----
  // The answer lists the gateway's ICE servers in Link headers
  // (rel="ice-server"), TURN with a short-lived credential in the TURN REST
  // form (username "expiry:user"); an ICE restart's 200 lists them again,
  // freshly minted. The page keeps the latest list while it is valid, so
  // the next call gathers relay candidates from the start.
  function iceServersFromLinks(header) {
    const byCred = new Map();
    for (const part of (header || '').split(/,\s*(?=<)/)) {
      const m = /^\s*<([^>]*)>(.*)$/.exec(part);
      if (!m) continue;
      const at = {};
      for (const a of m[2].matchAll(/;\s*([A-Za-z-]+)\s*=\s*(?:"([^"]*)"|([^;,\s]*))/g)) at[a[1].toLowerCase()] = a[2] ?? a[3];
      if (at.rel !== 'ice-server') continue;
      const key = (at.username || '') + '\n' + (at.credential || '');
      let srv = byCred.get(key);
      if (!srv) {
        srv = { urls: [] };
        if (at.username) { srv.username = at.username; srv.credential = at.credential || ''; }
        byCred.set(key, srv);
      }
      srv.urls.push(m[1]);
    }
    return [...byCred.values()];
  }

  const isTurn = (srv) => srv.urls.some((u) => /^turns?:/i.test(u));

  // rememberServers keeps servers until the first TURN credential in them
  // expires (less a minute, for the call's set-up).
  function rememberServers(servers) {
    if (!servers.length) return;
    let expires = Infinity;
    for (const srv of servers) {
      const m = /^(\d+):/.exec(srv.username || '');
      if (m && isTurn(srv)) expires = Math.min(expires, Number(m[1]) * 1000 - 60000);
    }
    state.iceServers = { servers, expires };
  }

  function knownServers() {
    const k = state.iceServers;
    return k && Date.now() < k.expires ? k.servers : [];
  }

  // gathered resolves when the current ICE gathering ends (the null
  // candidate) or after ms; listen before setLocalDescription.
  function gathered(pc, ms) {
    return new Promise((resolve) => {
      const done = () => { clearTimeout(t); pc.removeEventListener('icecandidate', on); resolve(); };
      const on = (e) => { if (!e.candidate) done(); };
      const t = setTimeout(done, ms);
      pc.addEventListener('icecandidate', on);
    });
  }

  // sdpFragment is an application/trickle-ice-sdpfrag (RFC 8840) of a local
  // description: its ICE credentials and the bundled first section's
  // candidates, complete.
  function sdpFragment(sdp) {
    let ufrag = '', pwd = '', mid = null, section = -1;
    const cands = [];
    for (const l of sdp.split(/\r?\n/)) {
      if (l.startsWith('m=')) section++;
      else if (l.startsWith('a=ice-ufrag:')) ufrag = ufrag || l.slice(12);
      else if (l.startsWith('a=ice-pwd:')) pwd = pwd || l.slice(10);
      else if (section === 0 && l.startsWith('a=mid:')) mid = mid ?? l.slice(6);
      else if (section === 0 && l.startsWith('a=candidate:')) cands.push(l);
    }
    let out = `a=ice-ufrag:${ufrag}\r\na=ice-pwd:${pwd}\r\n`;
    if (cands.length) out += `m=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:${mid ?? '0'}\r\n${cands.join('\r\n')}\r\n`;
    return out + 'a=end-of-candidates\r\n';
  }

  // withFragment is the remote answer with the gateway's restart fragment
  // in place of its ICE credentials and candidates (credentials in every
  // section, candidates in the bundled first), its version bumped.
  function withFragment(sdp, frag) {
    let ufrag = '', pwd = '';
    const cands = [];
    for (const l of frag.split(/\r?\n/)) {
      if (l.startsWith('a=ice-ufrag:')) ufrag = l.slice(12);
      else if (l.startsWith('a=ice-pwd:')) pwd = l.slice(10);
      else if (l.startsWith('a=candidate:')) cands.push(l);
    }
    const out = [];
    let section = -1;
    const close = () => {
      if (section < 0) return;
      out.push(`a=ice-ufrag:${ufrag}`, `a=ice-pwd:${pwd}`);
      if (section === 0) out.push(...cands, 'a=end-of-candidates');
    };
    for (const l of sdp.split(/\r?\n/)) {
      if (!l || /^a=(ice-ufrag|ice-pwd|candidate|end-of-candidates)\b/.test(l)) continue;
      if (l.startsWith('m=')) { close(); section++; }
      const o = /^o=(\S+) (\S+) (\d+) (.*)$/.exec(l);
      out.push(o ? `o=${o[1]} ${o[2]} ${(BigInt(o[3]) + 1n) % (1n << 63n)} ${o[4]}` : l);
    }
    close();
    return out.join('\r\n') + '\r\n';
  }

  // restartIce restarts ICE by PATCH on the session (RFC 9725 §4.4) with
  // the servers the gateway listed, so that a call whose direct path did
  // not come up, or failed, tries the TURN relay with a fresh credential.
  async function restartIce(v, why) {
    if (v.restarting || v.closing || !v.location || state.voice !== v) return;
    v.restarting = true;
    v.restarts++;
    v.why.push(why);
    const pc = v.pc;
    try {
      const servers = v.servers.length ? v.servers : knownServers();
      if (servers.length) pc.setConfiguration({ ...pc.getConfiguration(), iceServers: servers });
      const done = gathered(pc, 5000);
      await pc.setLocalDescription(await pc.createOffer({ iceRestart: true }));
      await done;
      const headers = { 'Content-Type': 'application/trickle-ice-sdpfrag' };
      if (token) headers.Authorization = 'Bearer ' + token;
      if (v.etag) headers['If-Match'] = v.etag;
      const res = await fetch(v.location, { method: 'PATCH', headers, body: sdpFragment(pc.localDescription.sdp) });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      v.etag = res.headers.get('ETag') || v.etag;
      const fresh = iceServersFromLinks(res.headers.get('Link'));
      if (fresh.length) { v.servers = fresh; rememberServers(fresh); }
      const frag = await res.text();
      if (state.voice !== v || v.closing) return;
      await pc.setRemoteDescription({ type: 'answer', sdp: withFragment(pc.remoteDescription.sdp, frag) });
      if (!v.connectedAt) voiceNote(`Connecting voice through a relay (${why})…`);
    } catch (err) {
      if (state.voice === v && !v.closing) stopVoice('Voice could not reconnect: ' + (err && err.message ? err.message : err));
    } finally {
      v.restarting = false;
    }
  }

  // A direct path gets this long before the relay is tried.
  const DIRECT_MS = 4000;
  // ICE restarts per call after a failure (the first try included).
  const MAX_RESTARTS = 3;

  function voiceNote(text) { $('voice-note').textContent = text; }

  function voiceUnavailable(msg) {
    $('mic').disabled = true;
    $('mic').setAttribute('aria-disabled', 'true');
    voiceNote(msg);
  }

  function micPressed(on) {
    const mic = $('mic');
    mic.textContent = on ? 'Stop talking' : 'Start talking';
    mic.setAttribute('aria-pressed', on ? 'true' : 'false');
  }

  // playRemote plays VERA's track and measures its energy: the first loud
  // frame after a turn's reply.audio_started is when the person hears it.
  function playRemote(v, stream) {
    const el = $('remote-audio');
    el.srcObject = stream;
    el.play().catch(() => { /* autoplay refused: the meter still runs */ });
    if (!v.ctx || v.analyser) return;
    try {
      // Chromium feeds WebAudio from a remote track only while an element
      // plays it, so the <audio> element above stays; the analyser is not
      // connected to the destination (that would play it twice).
      const an = v.ctx.createAnalyser();
      an.fftSize = 1024;
      v.ctx.createMediaStreamSource(stream).connect(an);
      v.analyser = an;
      const buf = new Float32Array(an.fftSize);
      v.timer = setInterval(() => meter(v, an, buf), METER_MS);
    } catch {
      v.analyser = null;
    }
  }

  function meter(v, an, buf) {
    an.getFloatTimeDomainData(buf);
    let sum = 0;
    for (let i = 0; i < buf.length; i++) sum += buf[i] * buf[i];
    const rms = Math.sqrt(sum / buf.length);
    const now = performance.now();
    v.rms = rms;
    v.maxRms = Math.max(v.maxRms, rms);
    $('voice-level').style.width = Math.min(100, Math.round(rms * 400)) + '%';
    for (const t of state.turns.values()) {
      if (t.src !== 'voice' || !t.t0) continue;
      if (!t.audioEvent) { t.quiet = Math.max(t.quiet || 0, rms); continue; }
      if (t.audioStopped && now > t.audioStopped + TAIL_MS) continue;
      t.peak = Math.max(t.peak, rms);
      if (!t.audio && rms >= HEARD_RMS) heard(t, now, rms);
    }
  }

  async function startVoice() {
    const mic = $('mic');
    mic.disabled = true;
    mic.setAttribute('aria-busy', 'true');
    const v = { pc: null, dc: null, media: null, ctx: null, analyser: null, timer: 0, location: '', etag: '',
      rms: 0, maxRms: 0, micAt: 0, connectedAt: 0, closing: false, deleteStatus: 0,
      servers: [], restarts: 0, restarting: false, fallback: 0, why: [] };
    state.voice = v;
    try {
      // Created inside the click so the autoplay policy lets it run.
      const AC = window.AudioContext || window.webkitAudioContext;
      if (AC) { try { v.ctx = new AC(); v.ctx.resume().catch(() => {}); } catch { v.ctx = null; } }
      // Echo cancellation stays on (VERA's voice comes out of a speaker).
      // Noise suppression and gain control are off: the gateway runs its own
      // VAD and recogniser, and the browser's gain ramp clipped word onsets
      // in the Chromium test (the recogniser then lost the first words).
      v.media = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: false, autoGainControl: false } });
      v.micAt = performance.now();
      // ?relay=1 sends media only through the gateway's TURN relay (a
      // network that allows nothing else; and the relay test).
      const relayOnly = params.get('relay') === '1';
      const known = knownServers();
      const pc = new RTCPeerConnection({ bundlePolicy: 'max-bundle', iceServers: known, iceTransportPolicy: relayOnly ? 'relay' : 'all' });
      v.pc = pc;
      pc.addTransceiver(v.media.getAudioTracks()[0], { direction: 'sendrecv', streams: [v.media] });
      const dc = pc.createDataChannel('events', { ordered: true });
      v.dc = dc;
      dc.onopen = () => {
        // The device came with the offer; a region needs a hello.
        if (state.region) dc.send(JSON.stringify({ type: 'hello', device: state.device, region: state.region }));
      };
      dc.onmessage = (e) => {
        let ev;
        try { ev = JSON.parse(e.data); } catch { return; }
        if (state.voice === v) handle(ev, 'voice');
      };
      dc.onclose = () => { if (state.voice === v && !v.closing) endVoice(v, 'The gateway ended the voice session.'); };
      pc.ontrack = (e) => playRemote(v, e.streams[0] || new MediaStream([e.track]));
      pc.onconnectionstatechange = () => {
        if (state.voice !== v) return;
        if (pc.connectionState === 'connected' && !v.connectedAt) {
          v.connectedAt = performance.now();
          voiceNote('Listening. Speak naturally; VERA answers when you pause.');
        }
        if (pc.connectionState === 'failed') failed();
      };
      // "disconnected" may heal by itself; "failed" does not. ICE failed:
      // restart it (through the relay, if the gateway has one) a few times.
      // The connection failed while a restart's checks run (ICE "checking":
      // the previous generation's failure): wait for them. Else (DTLS): end.
      const failed = () => {
        if (state.voice !== v || v.restarting || v.closing) return;
        const ice = pc.iceConnectionState;
        if (ice === 'failed' && v.restarts < MAX_RESTARTS) restartIce(v, 'the connection failed');
        else if (ice === 'failed' || (pc.connectionState === 'failed' && ice !== 'checking' && ice !== 'new')) stopVoice('Voice connection failed.');
      };
      pc.oniceconnectionstatechange = failed;
      await pc.setLocalDescription(await pc.createOffer());
      await iceComplete(pc, 3000);
      const headers = { 'Content-Type': 'application/sdp' };
      if (token) headers.Authorization = 'Bearer ' + token;
      const res = await fetch('/v1/voice/sessions?device=' + encodeURIComponent(state.device),
        { method: 'POST', headers, body: pc.localDescription.sdp });
      if (res.status === 404 || res.status === 405 || res.status === 501) {
        endVoice(v, '');
        voiceUnavailable('Voice is not available on this gateway; text chat works.');
        return;
      }
      if (res.status !== 201) {
        let msg = `HTTP ${res.status}`;
        try { msg = (await res.json()).error.message; } catch { /* not an envelope */ }
        throw new Error(msg);
      }
      v.location = res.headers.get('Location') || '';
      v.etag = res.headers.get('ETag') || '';
      v.servers = iceServersFromLinks(res.headers.get('Link'));
      rememberServers(v.servers);
      await pc.setRemoteDescription({ type: 'answer', sdp: await res.text() });
      // Gathered without the relay the answer offers: relay-only needs it
      // now; otherwise it is the fallback when no direct path comes up.
      if (!known.some(isTurn) && v.servers.some(isTurn)) {
        if (relayOnly) restartIce(v, 'relay only');
        else v.fallback = setTimeout(() => { if (!v.connectedAt) restartIce(v, 'no direct path'); }, DIRECT_MS);
      }
      micPressed(true);
      if (!v.connectedAt) voiceNote('Connecting voice…');
    } catch (err) {
      await stopVoice('Voice could not start: ' + (err && err.message ? err.message : err));
    } finally {
      mic.removeAttribute('aria-busy');
      if (!mic.getAttribute('aria-disabled')) mic.disabled = false;
    }
  }

  // endVoice releases the connection, the microphone and the meter.
  function endVoice(v, note) {
    if (state.voice === v) state.voice = null;
    v.closing = true;
    clearInterval(v.timer);
    clearTimeout(v.fallback);
    try { if (v.pc) v.pc.close(); } catch { /* closed */ }
    if (v.media) v.media.getTracks().forEach((t) => t.stop());
    if (v.ctx) v.ctx.close().catch(() => {});
    $('remote-audio').srcObject = null;
    $('voice-level').style.width = '0%';
    micPressed(false);
    if (note) voiceNote(note);
  }

  // stopVoice hangs up: DELETE on the session's Location, then release.
  async function stopVoice(note) {
    const v = state.voice;
    if (!v) return 0;
    v.closing = true;
    if (v.location) {
      const headers = token ? { Authorization: 'Bearer ' + token } : {};
      try { v.deleteStatus = (await fetch(v.location, { method: 'DELETE', headers })).status; } catch { /* best effort */ }
    }
    endVoice(v, note || 'Voice ended.');
    return v.deleteStatus;
  }

  $('mic').addEventListener('click', () => { if (state.voice) stopVoice(); else startVoice(); });
  if (!window.RTCPeerConnection || !navigator.mediaDevices) voiceUnavailable('This browser cannot do voice; text chat works.');

  // ---- scripted check (?e2e=1), used by the Chromium test ---------------
  function waitFor(cond, ms, what) {
    return new Promise((resolve, reject) => {
      const start = performance.now();
      const tick = () => {
        let v;
        try { v = cond(); } catch { v = false; }
        if (v) return resolve(v);
        if (performance.now() - start > ms) return reject(new Error('timed out waiting for ' + what));
        setTimeout(tick, 25);
      };
      tick();
    });
  }

  function key(k) { $('hud').dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true })); }

  async function e2e() {
    const report = params.get('report') || '/e2e/report';
    const out = { ok: false };
    try {
      await waitFor(() => state.sessionId, 15000, 'session.created');
      $('message').value = params.get('say') || 'I want to end my life tonight';
      $('send').click();
      await waitFor(() => window.__hud && window.__hud.page === 1 && /^1\/\d+$/.test($('hud').dataset.page), 20000, 'HUD page 1/N');
      out.hud = { ...window.__hud, data_page: $('hud').dataset.page };
      $('hud').focus();
      key('Escape'); // back on page 1: a safety card is sticky
      out.after_escape_first = window.__hud ? window.__hud.indicator : null;
      if (window.__hud.of > 1) {
        key('ArrowDown');
        out.paged = { ...window.__hud, data_page: $('hud').dataset.page };
        key('Escape'); // back one page
        out.after_escape = window.__hud ? window.__hud.indicator : null;
      }
      const before = window.__hud.focus;
      key('ArrowRight');
      out.focus_moved = { from: before, to: window.__hud.focus };
      key('ArrowLeft');
      const turnId = [...state.turns.values()].pop().id;
      await waitFor(() => state.turns.get(turnId).ended, 20000, 'reply.done');
      const types = state.events.filter((e) => e.src === 'chat').map((e) => e.type);
      out.events = state.events;
      out.card_index = types.indexOf('safety.card');
      out.first_delta_index = types.indexOf('reply.delta');
      out.acks = state.acksSent;
      out.announced = $('announce').textContent;
      out.reply = state.turns.get(turnId).text;
      out.hud_png = $('hud-canvas').toDataURL('image/png');
      if (params.get('snap')) {
        // The test takes its screenshot of the page now, card on the HUD.
        await fetch(params.get('snap'), { method: 'POST' });
      }
      // Drop the connection: the page reconnects and resumes the session.
      const sid = state.sessionId;
      state.ws.close(4000, 'test: network change');
      await waitFor(() => state.events.some((e) => e.type === 'session.created' && e.resumed), 20000, 'resumed session');
      out.resumed_same_session = state.sessionId === sid;
      $('message').value = 'thank you';
      $('send').click();
      await waitFor(() => [...state.turns.values()].some((t) => t.ended && /thank you/.test(t.text)), 20000, 'second reply');
      out.user_bubbles = document.querySelectorAll('#transcript .user').length;
      // A proposed action is approved with its button, like a person would.
      $('message').value = 'please remind me to call Sam';
      $('send').click();
      const approve = await waitFor(() => document.querySelector('#actions .action button'), 20000, 'action.proposed');
      approve.click();
      await waitFor(() => /approved/i.test(($('actions').querySelector('.state') || {}).textContent || ''), 20000, 'action.updated');
      out.action_state = $('actions').querySelector('.state').textContent;
      out.latency = [...document.querySelectorAll('#latency li')].map((li) => li.textContent);
      if (params.get('mic') === '1') {
        // The voice endpoint may not exist: the mic must degrade gracefully.
        $('mic').click();
        await waitFor(() => $('mic').disabled && $('voice-note').textContent || (state.voice && state.voice.location), 20000, 'voice outcome');
        out.voice_note = $('voice-note').textContent;
        out.mic_disabled = $('mic').disabled;
      }
      out.ok = true;
    } catch (err) {
      out.error = String(err && err.message ? err.message : err);
      out.events = state.events;
    }
    await fetch(report, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(out) });
  }

  // rtcStats picks the audio counters that tell a capture or network
  // problem from a recognition one.
  async function rtcStats(pc) {
    const pick = (r, keys) => Object.fromEntries(keys.filter((k) => k in r).map((k) => [k, r[k]]));
    const out = {};
    (await pc.getStats()).forEach((r) => {
      if (r.kind && r.kind !== 'audio') return;
      if (r.type === 'media-source') out.mic = pick(r, ['audioLevel', 'totalAudioEnergy', 'totalSamplesDuration']);
      if (r.type === 'outbound-rtp') out.sent = pick(r, ['packetsSent', 'bytesSent']);
      if (r.type === 'remote-inbound-rtp') out.gateway_saw = pick(r, ['packetsLost', 'jitter', 'roundTripTime']);
      if (r.type === 'inbound-rtp') out.received = pick(r, ['packetsReceived', 'packetsLost', 'jitter', 'concealedSamples', 'totalSamplesReceived']);
    });
    return out;
  }

  // selectedPath is the local and remote candidate types of the pair ICE
  // selected (the relay test checks it went through TURN).
  async function selectedPath(pc) {
    const st = await pc.getStats();
    let pair = null;
    st.forEach((r) => {
      if (r.type === 'transport' && r.selectedCandidatePairId) pair = st.get(r.selectedCandidatePairId);
    });
    if (!pair) st.forEach((r) => { if (r.type === 'candidate-pair' && r.nominated && r.state === 'succeeded') pair = r; });
    if (!pair) return null;
    const l = st.get(pair.localCandidateId) || {}, r = st.get(pair.remoteCandidateId) || {};
    return { local: l.candidateType || '', local_protocol: l.protocol || '', relay_protocol: l.relayProtocol || '', remote: r.candidateType || '' };
  }

  // ---- scripted voice check (?voice=1), used by the Chromium voice test ---
  // The browser's fake microphone plays a fixture; the page waits for one
  // spoken turn and its reply audio, then hangs up and reports.
  async function voiceE2E() {
    const report = params.get('report') || '/e2e/report';
    const out = { ok: false };
    const voiceTurn = () => [...state.turns.values()].find((t) => t.src === 'voice' && t.heardText);
    try {
      await waitFor(() => !$('mic').disabled, 15000, 'mic button');
      $('mic').focus();
      $('mic').click();
      const v = await waitFor(() => state.voice && state.voice.connectedAt && state.voice, 20000, 'voice connected');
      out.location = v.location;
      out.connect_ms = Math.round(v.connectedAt - v.micAt);
      out.analyser = !!v.analyser;
      out.mic_pressed = $('mic').getAttribute('aria-pressed');
      const t = await waitFor(voiceTurn, 60000, 'transcript.final');
      await waitFor(() => t.audio, 30000, 'reply audio heard');
      // Listen a while: the energy of the reply, and time for the server to
      // re-send an unacknowledged safety card (it must not need to).
      const until = performance.now() + Number(params.get('listen_ms') || 3000);
      await waitFor(() => performance.now() >= until || t.audioStopped, 60000, 'listening');
      if (window.__hud) out.hud = { ...window.__hud, data_page: $('hud').dataset.page, src: state.hud && state.hud.src };
      out.acks = state.acksSent;
      out.announced = $('announce').textContent;
      out.cards = document.querySelectorAll('#cards .safety').length;
      out.turn = { id: t.wire, text: t.heardText, reply: t.text, t0: t.t0, audio_event_ms: Math.round(t.audioEvent - t.t0),
        heard_ms: Math.round(t.audio - t.t0), peak_rms: t.peak, quiet_rms: t.quiet || 0 };
      out.latency = [...document.querySelectorAll('#latency li')].map((li) => li.textContent);
      out.caption = $('caption').textContent;
      out.user_bubbles = [...document.querySelectorAll('#transcript .user')].map((li) => li.querySelector('.body').textContent);
      out.stats = await rtcStats(v.pc);
      out.ice_restarts = v.restarts;
      out.ice_restart_reasons = v.why;
      out.path = await selectedPath(v.pc);
      if (params.get('snap')) await fetch(params.get('snap'), { method: 'POST' });
      $('mic').click(); // hang up
      await waitFor(() => !state.voice && v.deleteStatus, 10000, 'hang-up');
      out.delete_status = v.deleteStatus;
      out.mic_after = $('mic').getAttribute('aria-pressed');
      out.voice_note = $('voice-note').textContent;
      out.ok = true;
    } catch (err) {
      out.error = String(err && err.message ? err.message : err);
    }
    out.events = state.events.filter((e) => e.src === 'voice');
    out.turns = [...state.turns.values()].filter((t) => t.src === 'voice').map((t) => ({ id: t.wire, text: t.heardText,
      t0: t.t0, audio_event: t.audioEvent, audio: t.audio, stopped: t.audioStopped, peak: t.peak, quiet: t.quiet || 0 }));
    await fetch(report, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(out) });
  }

  // The HUD draws with the Go fonts the glasses layout measured with.
  const fontsReady = document.fonts
    ? Promise.all([document.fonts.load('400 28px "Go"'), document.fonts.load('700 28px "Go"')]).catch(() => {})
    : Promise.resolve();
  fontsReady.then(() => { if (state.hud) drawHud(); });
  drawHud();
  connect();
  if (params.get('e2e') === '1') fontsReady.then(e2e);
  else if (params.get('voice') === '1') fontsReady.then(voiceE2E);
})();
