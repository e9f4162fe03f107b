// VERA on Meta Ray-Ban Display: a 600×600 web app driven by the Neural
// Band's D-pad (arrow keys), pinch (Enter, a click on the focused element)
// and back (Escape). It speaks the gateway's event protocol over
// /v1/chat, shows VERA's reply as large captions, and renders safety cards
// and action prompts as DOM from the pages the gateway laid out for this
// display. A safety card stays until Done; each page shown is
// acknowledged. The socket closes while the page is hidden and resumes,
// with no event lost, when it is visible again. No framework, no build.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const DEVICE = 'meta-rayban-display';
  const SURFACE = 'display';
  const PAIRING_KEY = 'vera.glasses.pairing';
  const MAX_CHARS = 8000;
  const TRACE_MAX = 4000;
  // A token this close to its expiry is refreshed before it is used.
  const TOKEN_MARGIN_MS = 15000;
  const auth = document.documentElement.dataset.auth; // "dev" or "pair"

  const S = {
    ws: null, opened: false, connecting: false, replaced: false, sessionId: '', resumeToken: '', lastSeq: 0,
    retry: 0, retryTimer: 0, swReg: null,
    token: params.get('token') ? { value: params.get('token'), exp: Infinity, fixed: true } : null,
    pairing: loadPairing(),
    screen: 'talk', // talk | card | prompt | pair
    turn: null, // the latest turn: {id, text}
    you: '', // what the person said last, as shown
    cards: [], // safety cards not yet closed, the one on screen last
    lastCard: null, // the last card closed, behind "Help lines"
    latestCard: '', cleared: new Set(), pendingSelect: null,
    actions: new Map(), // action id → {a, pages, status}
    prompt: null, // the offered prompt: {cardId, actionId, pages, page}
    waiting: null, // a prompt the person backed out of
    created: 0, resumes: 0,
    trace: { seqs: [], types: [], acks: [], sent: [], errors: [], statuses: [] },
    t: { connected: 0, cardRx: 0, cardShown: 0, cardId: '' },
  };
  window.__glasses = S; // read by the browser test and the benchmark

  function log(list, v) {
    list.push(v);
    if (list.length > TRACE_MAX) list.splice(0, list.length - TRACE_MAX);
  }

  // ---- status and notices ----------------------------------------------
  function status(text, warn) {
    const el = $('status');
    if (el.textContent !== text) log(S.trace.statuses, text);
    el.textContent = text;
    el.classList.toggle('warn', !!warn);
  }

  function notice(text) {
    $('notice').textContent = text;
    $('notice').hidden = !text;
  }

  // Plain words for the gateway's error events; never codes.
  function plain(e) {
    switch (e.type) {
      case 'rate_limited': return 'You’re sending quickly. Wait a moment, then try again.';
      case 'permission_error': return 'These glasses are paired for another device. Pair again from the VERA app.';
      case 'unavailable': return 'VERA is busy right now. Try again in a moment.';
      case 'engine_unavailable': return 'VERA couldn’t answer just now. Try again in a moment.';
      case 'invalid_request': return e.field === 'text' ? 'That message is too long to send.' : 'VERA couldn’t read that. Try again.';
      default: return 'Something went wrong. Try again.';
    }
  }

  // ---- pairing ------------------------------------------------------------
  function loadPairing() {
    try {
      const p = JSON.parse(localStorage.getItem(PAIRING_KEY) || 'null');
      return p && p.refresh_token && p.device === DEVICE ? p : null;
    } catch { return null; }
  }

  // keep stores what an exchange or a refresh returned. The token's expiry
  // is kept relative to the server's Date, so a glasses clock that is off
  // does not matter.
  function keep(c, serverNow, receivedAt) {
    S.pairing = { refresh_token: c.refresh_token, pairing_id: c.pairing_id, device: c.device };
    try { localStorage.setItem(PAIRING_KEY, JSON.stringify(S.pairing)); } catch { /* private mode: this launch only */ }
    const life = Date.parse(c.token_expires_at) - (serverNow || Date.now());
    S.token = { value: c.token, exp: (receivedAt || Date.now()) + (Number.isFinite(life) ? life : 30000) };
  }

  function forget() {
    S.pairing = null;
    S.token = null;
    try { localStorage.removeItem(PAIRING_KEY); } catch { /* nothing kept */ }
  }

  async function post(path, body) {
    let res;
    try {
      res = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
        cache: 'no-store', credentials: 'omit' });
    } catch { return { ok: false, network: true }; }
    return answer(res);
  }

  async function answer(res) {
    if (!res) return { ok: false, network: true };
    let data = null;
    try { data = await res.json(); } catch { /* not JSON */ }
    return { ok: res.ok, status: res.status, data, retryAfter: Number(res.headers.get('Retry-After')) || 0,
      date: Date.parse(res.headers.get('Date') || '') || 0, at: res.at || Date.now() };
  }

  // refresh trades the refresh credential for a token: the first time, the
  // request the page's inline script started while this one downloaded.
  async function refresh() {
    const early = window.__veraBoot;
    window.__veraBoot = null;
    if (early) return answer(await early.catch(() => null));
    return post('/v1/pairings/refresh', { refresh_token: S.pairing.refresh_token, device: DEVICE });
  }

  // credential returns the token to connect with ('' in dev mode without a
  // pairing), refreshing it first when it is about to expire; null when
  // the app cannot connect now (the pairing screen or a retry is shown).
  async function credential() {
    if (S.token && (S.token.fixed || S.token.exp - Date.now() > TOKEN_MARGIN_MS)) return S.token.value;
    if (!S.pairing) {
      if (auth === 'dev') return '';
      showPair('');
      return null;
    }
    const r = await refresh();
    if (r.ok && r.data) {
      keep(r.data, r.date, r.at);
      // An answer that waited (the page started hidden) may hold an old token.
      if (S.token.exp - Date.now() > TOKEN_MARGIN_MS) return S.token.value;
      return credential();
    }
    if (r.status === 401 || r.status === 403) {
      forget();
      showPair('These glasses are no longer paired. Get a new code in the VERA app.');
      return null;
    }
    retryLater(r.network ? 'Can’t reach VERA.' : 'VERA isn’t answering.', r.retryAfter);
    return null;
  }

  function showPair(note) {
    show('pair');
    status('');
    $('pair-note').textContent = note;
    $('code').focus();
  }

  async function pairWith(code) {
    $('pair-note').textContent = 'Pairing…';
    const r = await post('/v1/pairings/exchange', { code, device: DEVICE });
    if (r.ok && r.data) {
      keep(r.data, r.date, r.at);
      $('code').value = '';
      $('pair-note').textContent = '';
      show('talk');
      $('msg').focus();
      connect();
      return;
    }
    const msg = r.data && r.data.error && r.data.error.message;
    showPair(r.network ? 'Can’t reach VERA. Check the connection, then try again.'
      : msg ? msg.charAt(0).toUpperCase() + msg.slice(1) + '.' : 'That didn’t work. Try again.');
  }

  // ---- connection -----------------------------------------------------------
  async function connect() {
    clearTimeout(S.retryTimer);
    S.retryTimer = 0;
    if (document.hidden || S.ws || S.connecting || S.replaced) return;
    S.connecting = true;
    let cred;
    try { cred = await credential(); } finally { S.connecting = false; }
    if (cred === null || document.hidden || S.ws) return;
    if (!S.sessionId) status('Connecting…');
    const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/v1/chat';
    let ws;
    try { ws = new WebSocket(url, cred ? ['vera.v1', cred] : ['vera.v1']); } catch { retryLater('Can’t reach VERA.'); return; }
    S.ws = ws;
    S.opened = false;
    const refreshed = !!cred && !S.token.fixed;
    ws.onopen = () => { if (S.ws === ws) { S.opened = true; hello(); } };
    ws.onmessage = (e) => {
      const rx = performance.now();
      let ev;
      try { ev = JSON.parse(e.data); } catch { return; }
      if (S.ws === ws) handle(ev, rx);
    };
    ws.onclose = (e) => {
      if (S.ws !== ws) return; // closed on purpose (hidden page)
      const opened = S.opened;
      S.ws = null;
      S.opened = false;
      // Refused before it opened: the token may have expired or ended;
      // the next try refreshes it first.
      if (!opened && refreshed) S.token = null;
      closed(e.code, opened);
    };
  }

  function hello() {
    const h = { type: 'hello', device: DEVICE };
    if (params.get('region')) h.region = params.get('region');
    if (S.resumeToken) { h.resume_token = S.resumeToken; h.last_seq = S.lastSeq; }
    send(h);
  }

  function closed(code, opened) {
    if (code === 4001) {
      // Another tab or device resumed this conversation: do not fight it.
      S.replaced = true;
      status('VERA is open somewhere else.', true);
      $('retry').hidden = false;
      return;
    }
    const why = !opened ? 'Can’t reach VERA.' : code === 1001 ? 'VERA is restarting.'
      : code === 1008 ? 'The connection was too slow.' : code === 1009 ? 'That was too much to send at once.' : 'Connection lost.';
    retryLater(why, 0);
  }

  function retryLater(why, afterSec) {
    clearTimeout(S.retryTimer);
    if (navigator.onLine === false) { status('No network. VERA reconnects when you’re back online.', true); return; }
    const delay = afterSec > 0 ? afterSec * 1000 : Math.min(10000, 500 * 2 ** S.retry++);
    status(why + ' Reconnecting…', true);
    S.retryTimer = setTimeout(connect, delay);
  }

  function send(obj) {
    if (!S.ws || !S.opened || S.ws.readyState !== WebSocket.OPEN) return false;
    S.ws.send(JSON.stringify(obj));
    return true;
  }

  // Hidden: close the socket (the glasses save power; the gateway keeps the
  // session for its resume window). Visible: resume from the last event.
  function visibility() {
    if (document.hidden) {
      clearTimeout(S.retryTimer);
      const ws = S.ws;
      S.ws = null;
      S.opened = false;
      if (ws) ws.close(1000, 'page hidden');
      status('Paused');
      return;
    }
    if (S.swReg) S.swReg.update().catch(() => {});
    connect();
  }

  // ---- events -------------------------------------------------------------
  function handle(ev, rx) {
    if (ev.type === 'session.created' && !ev.resumed) S.lastSeq = 0; // a new session numbers from 1
    if (ev.seq > 0) {
      if (ev.seq <= S.lastSeq) return; // already seen
      S.lastSeq = ev.seq;
      log(S.trace.seqs, ev.seq);
      log(S.trace.types, ev.type);
    }
    switch (ev.type) {
      case 'session.created': return created(ev);
      case 'notice': return notice(ev.text || '');
      case 'transcript.final': return userSaid(ev);
      case 'reply.delta': turnOf(ev.turn_id).text += ev.delta || ''; return drawReply();
      case 'reply.done': turnOf(ev.turn_id).text = ev.text || ''; return drawReply();
      case 'reply.interrupted': turnOf(ev.turn_id).text = (ev.heard || '') + ' …'; return drawReply();
      case 'safety.card': return safetyCard(ev, rx);
      case 'display.card': return ev.kind === 'prompt' ? promptCard(ev) : undefined;
      case 'display.clear': return cleared(ev);
      case 'action.proposed': return proposed(ev);
      case 'action.updated': return updated(ev);
      case 'error': return failed(ev);
      default: return undefined;
    }
  }

  function created(ev) {
    S.created++;
    if (ev.resumed && ev.session_id === S.sessionId) S.resumes++;
    else if (S.sessionId && ev.session_id !== S.sessionId) {
      resetTalk();
      notice('Your earlier conversation had ended. This is a new one.');
    }
    S.sessionId = ev.session_id;
    if (ev.resume_token) S.resumeToken = ev.resume_token;
    S.retry = 0;
    if (!S.t.connected) {
      S.t.connected = performance.now();
      idle(warmUp);
    }
    status('');
    $('retry').hidden = true;
    if (S.pendingSelect && ev.resumed) { const k = S.pendingSelect; S.pendingSelect = null; doneOnServer(k); }
    const top = S.cards[S.cards.length - 1];
    if (top && S.screen === 'card') ackShown(top); // pages shown while offline
  }

  function resetTalk() {
    S.lastCard = null;
    $('help').hidden = true;
    S.turn = null;
    S.actions.clear();
    S.prompt = null;
    S.waiting = null;
    S.latestCard = '';
    S.you = '';
    drawChip();
    drawReply();
    if (S.screen === 'prompt') show('talk');
  }

  function failed(ev) {
    const e = ev.error || {};
    log(S.trace.errors, (e.type || '') + ':' + (e.event_type || ''));
    if (e.event_type === 'hello' && S.resumeToken && (e.type === 'not_found' || e.type === 'conflict')) {
      // The conversation outlived its resume window: start a new one.
      S.resumeToken = '';
      S.lastSeq = 0;
      hello();
      return;
    }
    // A key or an ack for a card the gateway has forgotten: closed here.
    if (e.event_type === 'input.key' || e.event_type === 'display.ack') return;
    notice(plain(e));
  }

  // ---- conversation ---------------------------------------------------------
  function turnOf(id) {
    if (!S.turn || S.turn.id !== id) S.turn = { id, text: '' };
    return S.turn;
  }

  function userSaid(ev) {
    S.turn = { id: ev.turn_id, text: '' };
    S.you = 'You: ' + (ev.text || '');
    drawReply();
  }

  // The conversation is drawn only while it is on screen: behind a card or
  // a prompt its layout would land in the card's frames (a reply streams
  // in right behind its safety card). What arrived meanwhile is drawn as
  // the conversation comes back (toTalk).
  let replyQueued = false;
  let talkStale = false;
  function drawReply() {
    if (S.screen !== 'talk') { talkStale = true; return; }
    if (replyQueued) return;
    replyQueued = true;
    requestAnimationFrame(() => {
      replyQueued = false;
      if (S.screen === 'talk') drawTalk(); else talkStale = true;
    });
  }

  function drawTalk() {
    talkStale = false;
    const you = $('you');
    if (you.textContent !== S.you) you.textContent = S.you;
    you.hidden = !S.you;
    const el = $('reply');
    const text = S.turn ? S.turn.text : '';
    el.textContent = text || (S.turn ? '…' : 'VERA');
    el.classList.toggle('idle', !text);
    const c = $('caption');
    c.scrollTop = c.scrollHeight;
  }

  // show switches screens by visibility and content-visibility, not
  // display: a screen out of sight keeps its layout without being styled,
  // laid out or painted meanwhile, so bringing a card up costs only its
  // own page. A card or prompt coming up over the conversation covers it
  // (the sheet is opaque and on top), so the conversation is put out of
  // sight only after the sheet's first frame: restyling it is not the
  // card's cost.
  function show(screen) {
    const was = S.screen;
    S.screen = screen;
    const on = { talk: screen === 'talk', sheet: screen === 'card' || screen === 'prompt', pair: screen === 'pair' };
    const covered = on.sheet && was === 'talk';
    for (const id of ['talk', 'sheet', 'pair']) {
      if (covered && id === 'talk') {
        $('talk').setAttribute('aria-hidden', 'true');
        afterFrame(() => { if (S.screen !== 'talk') screenOn('talk', false); }, true);
        continue;
      }
      screenOn(id, on[id]);
    }
  }

  function screenOn(id, on) {
    const el = $(id);
    if (el.classList.contains('off') === on) el.classList.toggle('off', !on);
    if (el.hasAttribute('aria-hidden') === on) { if (on) el.removeAttribute('aria-hidden'); else el.setAttribute('aria-hidden', 'true'); }
  }

  function toTalk() {
    show('talk');
    if (talkStale) drawTalk();
    drawChip();
    $('msg').focus();
  }

  // ---- cards and prompts, as DOM from the gateway's pages -------------------
  // The sizes and colours of a page's text come from its display ops, so
  // the page reads as the gateway measured it; a page that still overflows
  // (another font on the glasses) is scaled down, never cut. A view holds
  // the DOM of one card's or prompt's pages: the page asked for is built at
  // once (built detached, attached with one append), the others right
  // after it is on screen, each on a layer of its own, so paging only moves
  // two layers (glasses.css, .page). Measured: cheaper on the glasses' CPU
  // than rewriting one page's text in place, which costs a layout per turn.
  const STYLES = ['title', 'heading', 'body', 'emph', 'meta'];
  // The sizes and colours glasses.css gives each style without var().
  const DEFAULTS = { title: [32, '#FFFFFF'], heading: [30, '#FFD479'], body: [28, '#E8EAED'], emph: [40, '#FFFFFF'],
    meta: [24, '#CFD3D9'] };
  let pageIds = 0;

  function newView(kind, pages, control) { return { kind, pages, control, els: [], cur: null, n: 0 }; }

  // buildPage builds page n (once): shown at once when on, else out of
  // sight until present shows it.
  function buildPage(view, n, on, into) {
    if (view.els[n - 1]) return view.els[n - 1];
    const p = view.pages[n - 1];
    const el = document.createElement('div');
    el.className = on ? 'page on' : 'page';
    // A page beside the screen is out of the accessibility tree too.
    if (!on) el.setAttribute('aria-hidden', 'true');
    el.dataset.n = String(p.n || n);
    // Only a page whose sizes or colours differ from the display's
    // defaults carries them as custom properties (.vars): var() costs
    // every restyle of the page.
    const seen = new Set();
    for (const op of p.ops || []) {
      if (op.op !== 'text' || !STYLES.includes(op.style) || seen.has(op.style)) continue;
      seen.add(op.style);
      const d = DEFAULTS[op.style];
      if (op.px && op.px !== d[0]) { el.style.setProperty('--px-' + op.style, op.px + 'px'); el.classList.add('vars'); }
      if (op.color && String(op.color).toUpperCase() !== d[1]) { el.style.setProperty('--c-' + op.style, op.color); el.classList.add('vars'); }
    }
    const head = document.createElement('header');
    head.className = 'head';
    const title = document.createElement('h1');
    title.className = 'title';
    title.id = 'page-title-' + ++pageIds;
    (p.title_lines && p.title_lines.length ? p.title_lines : [p.title || '']).forEach((t, i) => {
      if (i) title.append(document.createElement('br'));
      title.append(t);
    });
    const ind = document.createElement('span');
    ind.className = 'ind';
    ind.textContent = `${p.n}/${p.of}`;
    ind.setAttribute('aria-label', `page ${p.n} of ${p.of}`);
    head.append(title, ind);
    const box = document.createElement('div');
    box.className = 'lines';
    (p.lines || []).forEach((text, i) => {
      const ln = document.createElement('p');
      ln.className = 'ln ' + ((p.styles && p.styles[i]) || 'body');
      if (i === 0) ln.setAttribute('elementtiming', 'card-line');
      ln.textContent = text;
      box.append(ln);
    });
    const row = document.createElement('nav');
    row.className = 'controls';
    row.setAttribute('aria-label', 'Card controls');
    const ctls = (p.controls || []).map(view.control);
    row.append(...ctls);
    el.append(head, box, row);
    (into || $('sheet')).append(el);
    // What a page turn needs, found once: no query or layout read per key.
    const focusable = ctls.filter((c) => c.classList.contains('focusable'));
    const sp = S.t.split, built = performance.now();
    const scrollable = fit(el, box);
    if (sp && !sp.built) { sp.built = built; sp.fitted = performance.now(); }
    el.m = { titleId: title.id, box, row: focusable, scrollable,
      focus: focusable.find((c) => c.dataset.ctl === (p.focus || '')) || focusable[0] || null };
    view.els[n - 1] = el;
    return el;
  }

  // present shows page n of view and focuses the page's own control. A
  // view coming on screen is drawn first and focused right after its first
  // frame (moving the focus off the message box costs the glasses' slow
  // CPU about as much as drawing the card); keys act on the sheet meanwhile
  // (sheetKey: Enter clicks the first control, as the focused one would).
  function present(view, n) {
    const t0 = performance.now();
    const sheet = $('sheet');
    const fresh = sheet.view !== view;
    if (fresh) {
      // A view shown again (a card under the one just closed) builds its
      // pages anew: the sheet held another view's meanwhile.
      sheet.replaceChildren();
      forgetShown();
      sheet.labelled = '';
      if (sheet.view) { sheet.view.els = []; sheet.view.cur = null; sheet.view.queued = false; }
      sheet.view = view;
      view.els = [];
      view.cur = null;
      view.queued = false;
      sheet.dataset.kind = view.kind;
    }
    const el = buildPage(view, n, true);
    const turned = view.cur !== el;
    if (turned) {
      // Two layers move (transform only); the page that leaves is marked
      // aria-hidden once the focus has left it (hideOthers).
      if (view.cur) view.cur.classList.remove('on');
      el.classList.add('on');
      el.removeAttribute('aria-hidden');
    }
    if (el.scrolled) { el.m.box.scrollTop = 0; el.scrolled = false; }
    view.cur = el;
    view.n = n;
    if (sheet.labelled !== el.m.titleId) { sheet.labelled = el.m.titleId; sheet.setAttribute('aria-labelledby', el.m.titleId); }
    // A page coming on screen is drawn first and its control focused right
    // after that frame: the focus move (its events, its restyle, its ring)
    // is a frame of its own, not the page's. Keys act on the page meanwhile
    // (sheetKey); a control the person moved to meanwhile keeps the focus.
    const focus = () => {
      if (sheet.view !== view || view.n !== n) return;
      if (el.contains(document.activeElement)) { hideOthers(view); return; }
      const f = el.m.focus;
      if (f) f.focus({ preventScroll: true });
      if (!S.t.focused) S.t.focused = performance.now();
      S.t.pageFocused = performance.now();
      hideOthers(view);
    };
    // A turn's follow-up waits on the page's own notification that it was
    // placed (afterShown), not on a script callback inside the turn's frame.
    const then = fresh ? afterFrame : turned ? (fn) => afterShown(el, fn) : null;
    if (then) then(focus); else focus();
    S.t.drawMs = performance.now() - t0;
    // The other pages are built in tasks of their own (a key may come between).
    if (!view.queued) { view.queued = true; afterFrame(() => setTimeout(() => prebuild(view), 0), true); }
    return then || afterFrame;
  }

  // hideOthers takes the pages beside the screen out of the accessibility
  // tree (never one that holds the focus).
  function hideOthers(view) {
    const a = document.activeElement;
    for (const p of view.els) {
      if (p && p !== view.cur && !p.hasAttribute('aria-hidden') && !p.contains(a)) p.setAttribute('aria-hidden', 'true');
    }
  }

  // afterShown runs fn in a task after the frame that placed el: the first
  // notification of an IntersectionObserver for it, which comes in a task
  // of its own after that frame's rendering (a page turn's ack and focus,
  // with no script of ours inside the turn's frame).
  const shownQ = new Map();
  const placed = window.IntersectionObserver ? new IntersectionObserver((entries) => {
    const at = performance.now();
    for (const e of entries) {
      const fns = shownQ.get(e.target);
      if (!fns) continue;
      shownQ.delete(e.target);
      placed.unobserve(e.target);
      for (const f of fns) f(at);
    }
  }) : null;
  function forgetShown() {
    if (placed) for (const el of shownQ.keys()) placed.unobserve(el);
    shownQ.clear();
  }
  function afterShown(el, fn) {
    if (!placed) { afterFrame(fn); return; }
    let fns = shownQ.get(el);
    if (!fns) { fns = []; shownQ.set(el, fns); placed.observe(el); }
    fns.push(fn);
  }

  function idle(fn) {
    if (window.requestIdleCallback) requestIdleCallback(fn, { timeout: 2000 }); else setTimeout(fn, 50);
  }

  // afterFrame runs fn once the next frame has been produced: whatever is
  // queued for a frame shares one animation-frame callback (each costs
  // the glasses' slow CPU a few ms inside the frame) and then runs, in
  // order, in one task after it (late ones last).
  let frameQ = null;
  function afterFrame(fn, late) {
    if (!frameQ) {
      frameQ = { q: [], late: [] };
      requestAnimationFrame(() => {
        const { q, late: l } = frameQ;
        frameQ = null;
        const at = performance.now();
        setTimeout(() => { for (const f of q.concat(l)) f(at); }, 0);
      });
    }
    (late ? frameQ.late : frameQ.q).push(fn);
  }

  // prebuild builds the other pages of a view once its first is on screen,
  // the next page first, one per task (a key press may come between).
  function prebuild(view) {
    if ($('sheet').view !== view) return;
    if ($('sheet').classList.contains('off')) { view.queued = false; return; } // built when shown again
    const order = view.pages.map((_, k) => (view.n - 1 + k) % view.pages.length);
    const i = order.find((k) => !view.els[k]);
    if (i === undefined) return;
    buildPage(view, i + 1);
    setTimeout(() => prebuild(view), 0);
  }

  // fit scales a page's lines down until they fit its box (never below
  // 0.6; what still overflows scrolls, never cut) and tells whether the
  // box still scrolls.
  function fit(el, box) {
    // One estimate from the overflow, then small steps (each is a layout).
    const set = (f) => box.style.setProperty('--fit', String(f));
    let f = 1;
    const sh = box.scrollHeight, ch = box.clientHeight;
    const over = sh / Math.max(1, ch);
    let scrolls = sh > ch + 1;
    if (over > 1.005) {
      el.classList.add('vars');
      f = Math.max(0.6, Math.floor(100 / over) / 100);
      set(f);
      while ((scrolls = box.scrollHeight > box.clientHeight + 1) && f > 0.6) {
        f = Math.max(0.6, Math.round((f - 0.04) * 100) / 100);
        set(f);
      }
    }
    box.dataset.fit = String(f);
    return scrolls;
  }

  function button(c, disabled) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'focusable';
    b.dataset.ctl = c.id;
    b.textContent = c.label;
    b.disabled = !!disabled;
    return b;
  }

  function href(a) {
    const digits = String(a.value).replace(/[^0-9+]/g, '');
    return (a.type === 'call' ? 'tel:' : 'sms:') + digits;
  }

  // A page of the sheet is laid out while the app starts, out of sight, so
  // that the first card does not also pay for resolving its fonts.
  // It is a card's own code path: a sample page of every style and control
  // is built and fitted, so that the first card's script is already
  // compiled and its fonts and sizes resolved. The sample stays (out of
  // sight, laid out once, never restyled): while its styles live, the
  // renderer keeps their fonts, and the shaped words, for the card.
  function warmUp() {
    const host = document.createElement('div');
    host.className = 'warm';
    host.setAttribute('aria-hidden', 'true');
    const text = 'Help is here 0123456789 +/: ►';
    const ev = { card_id: 'warm', resources: [{ id: 'r', name: text, actions: [{ type: 'call', value: '988' }, { type: 'text', value: '741741' }] }] };
    // It fits its box, as the gateway's pages do (the sizes without var()).
    const page = { n: 1, of: 2, title: 'Help is here', lines: [text, text, text, text], styles: ['heading', 'body', 'emph', 'meta'],
      controls: [{ id: 'next', label: 'Next' }, { id: 'call:r', label: 'Call' }, { id: 'text:r', label: 'Text' }, { id: 'done', label: 'Done' }],
      focus: 'next', ops: [] };
    const view = newView('card', [page], (c) => cardControl({ ev }, c));
    document.body.append(host);
    buildPage(view, 1, false, host);
    S.t.warm = performance.now();
  }

  // ---- safety cards ---------------------------------------------------------
  function safetyCard(ev, rx) {
    // Where the card's time goes, from its arrival (read by the benchmark):
    // handed over, its first page built, laid out, the task done.
    S.t.split = { rx, parsed: performance.now(), built: 0, fitted: 0, done: 0 };
    const surfaces = ev.surfaces || [];
    const surf = surfaces.find((s) => s.surface === SURFACE && (s.pages || []).length)
      || surfaces.find((s) => (s.pages || []).length) || { surface: SURFACE, pages: fallbackPages(ev) };
    let card = S.cards.find((c) => c.ev.card_id === ev.card_id);
    if (card) {
      S.cards.splice(S.cards.indexOf(card), 1);
      if (ev.resend > 0) card.seen.clear(); // the gateway missed our ack: say it again
    } else {
      card = { ev, page: 1, seen: new Set() };
    }
    card.ev = ev;
    card.surf = surf;
    card.view = newView('card', surf.pages, (c) => cardControl(card, c));
    card.page = Math.min(card.page, surf.pages.length);
    S.cards.push(card);
    S.latestCard = ev.card_id;
    S.t.cardRx = rx;
    S.t.cardId = ev.card_id;
    S.t.cardShown = 0;
    S.t.focused = 0;
    showCard(card);
    S.t.split.done = performance.now();
  }

  // fallbackPages shows every resource when no page was laid out for this
  // display (never expected for this profile): one page, nothing dropped.
  function fallbackPages(ev) {
    const lines = [];
    const styles = [];
    for (const r of ev.resources || []) {
      lines.push(r.name); styles.push('heading');
      for (const a of r.actions || []) { lines.push(a.label || `${a.type} ${a.value}`); styles.push('emph'); }
    }
    if (!lines.length) { lines.push('Call your local emergency number.'); styles.push('emph'); }
    return [{ n: 1, of: 1, title: 'Help is here', lines, styles, controls: [{ id: 'done', label: 'Done' }], focus: 'done', ops: [] }];
  }

  function showCard(card) {
    if (S.screen !== 'card') show('card');
    ackShown(card, present(card.view, card.page));
  }

  function cardControl(card, c) {
    const [type, rid] = String(c.id).split(':');
    if (type === 'call' || type === 'text') {
      const r = (card.ev.resources || []).find((x) => x.id === rid);
      const a = r && (r.actions || []).find((x) => x.type === type);
      if (a) {
        const link = document.createElement('a');
        link.className = 'ctl focusable';
        link.href = href(a);
        link.dataset.ctl = c.id;
        link.textContent = c.label;
        link.setAttribute('aria-label', `${c.label} ${r.name}, ${a.value}`);
        return link;
      }
    }
    return button(c);
  }

  // ackShown acknowledges the page on screen once it has been drawn, and
  // only while the page is visible; a page shown while the socket was down
  // is acknowledged when it is back.
  function ackShown(card, then) {
    const n = card.page;
    (then || afterFrame)((at) => {
      if (card.ev.card_id === S.t.cardId && !S.t.cardShown) S.t.cardShown = at;
      if (document.hidden || S.screen !== 'card' || S.cards[S.cards.length - 1] !== card || card.page !== n || card.seen.has(n)) return;
      const ack = { type: 'display.ack', card_id: card.ev.card_id, page: n, surface: card.surf.surface };
      if (send(ack)) { card.seen.add(n); log(S.trace.acks, ack); }
    });
  }

  function cardPage(card, n) {
    if (n < 1 || n > card.surf.pages.length || n === card.page) return;
    card.page = n;
    showCard(card);
  }

  // closeCard is Done on the last page. The gateway is told with the key it
  // expects (select on the last page), so it clears the card there and shows
  // a prompt that waited behind it — but only for its own current card:
  // otherwise the key would land on that prompt.
  function closeCard() {
    const card = S.cards.pop();
    if (!card) return;
    // The crisis stays in force for the session and the gateway does not
    // send its card again unless the level rises: the card stays one pinch
    // away ("Help lines") for as long as this conversation lasts.
    S.lastCard = card;
    $('help').hidden = false;
    const id = card.ev.card_id;
    if (id === S.latestCard && !S.cleared.has(id)) {
      const k = { card_id: id, page: card.surf.pages.length, surface: card.surf.surface };
      if (!doneOnServer(k)) S.pendingSelect = k;
    }
    if (S.cards.length) showCard(S.cards[S.cards.length - 1]);
    else if (S.prompt) showPrompt();
    else toTalk();
  }

  function doneOnServer(k) {
    // The last page again first: the gateway pages by our acks, and select
    // closes the card only on its last page.
    if (!send({ type: 'display.ack', card_id: k.card_id, page: k.page, surface: k.surface })) return false;
    const key = { type: 'input.key', key: 'select', surface: k.surface };
    send(key);
    log(S.trace.sent, key);
    return true;
  }

  function cleared(ev) {
    const id = ev.card_id || '';
    if (S.prompt && id === S.prompt.cardId) {
      S.prompt = null;
      if (S.screen === 'prompt') toTalk();
      return;
    }
    if (S.waiting && id === S.waiting.cardId) { S.waiting = null; drawChip(); return; }
    if (id) S.cleared.add(id);
  }

  // ---- prompts ------------------------------------------------------------
  function proposed(ev) {
    const a = ev.action;
    if (!a || !a.id) return;
    const surf = (ev.surfaces || []).find((s) => s.surface === SURFACE) || (ev.surfaces || [])[0];
    S.actions.set(a.id, { a, pages: surf && surf.pages ? surf.pages : [], status: a.status || 'proposed' });
  }

  // promptCard: the gateway offers an action's prompt. It never covers a
  // safety card; the gateway offers it again once the card is closed.
  function promptCard(ev) {
    if (!ev.page) return;
    const actionId = String(ev.card_id).replace(/^prompt_/, '');
    const act = S.actions.get(actionId);
    if (act && act.status !== 'proposed') return;
    const pages = act && act.pages.length ? act.pages : [ev.page];
    S.prompt = { cardId: ev.card_id, actionId, pages, page: Math.min(Math.max(ev.page.n || 1, 1), pages.length),
      view: null };
    const pr = S.prompt;
    pr.view = newView('prompt', pages, (c) => button(c, pr.decided));
    S.waiting = null;
    drawChip();
    if (S.cards.length) return;
    showPrompt();
  }

  function showPrompt() {
    show('prompt');
    present(S.prompt.view, S.prompt.page);
  }

  function promptPage(n) {
    const pr = S.prompt;
    if (n < 1 || n > pr.pages.length || n === pr.page) return;
    pr.page = n;
    showPrompt();
  }

  // backOut: Escape on a prompt's first page leaves it without deciding;
  // it waits as a chip above the message box.
  function backOut() {
    S.waiting = S.prompt;
    S.prompt = null;
    toTalk();
  }

  function drawChip() {
    const chip = $('pending');
    const w = S.waiting;
    const act = w && S.actions.get(w.actionId);
    chip.hidden = !w;
    chip.textContent = w ? 'Waiting for you: ' + ((act && act.a.title) || 'a proposed action') : '';
  }

  function decide(approve) {
    const pr = S.prompt;
    const msg = { type: approve ? 'action.approve' : 'action.decline', action_id: pr.actionId, surface: SURFACE };
    if (!send(msg)) { notice('Not connected, so nothing was decided. Try again in a moment.'); return; }
    log(S.trace.sent, msg);
    pr.decided = true;
    $('sheet').querySelectorAll('.page button').forEach((b) => { b.disabled = true; });
  }

  const OUTCOMES = { approved: 'Approved', declined: 'Declined', expired: 'Expired, not done', failed: 'Didn’t go through',
    succeeded: 'Done' };

  function updated(ev) {
    const act = S.actions.get(ev.action_id);
    if (act) act.status = ev.status;
    const title = act ? act.a.title : '';
    if (S.prompt && S.prompt.actionId === ev.action_id) {
      S.prompt = null;
      if (S.screen === 'prompt') toTalk();
    }
    if (S.waiting && S.waiting.actionId === ev.action_id) { S.waiting = null; drawChip(); }
    notice(`${OUTCOMES[ev.status] || 'Updated'}${title ? ': ' + title : ''}`);
  }

  // ---- keys -----------------------------------------------------------------
  // ↓/↑ page a card or prompt (a page still taller than the screen scrolls
  // first), ←/→ move the focus along its controls, Enter (pinch) clicks
  // the focused control, Escape goes back a page; on a prompt's first page
  // it backs out, on a safety card never.
  function sheetKey(e) {
    const view = $('sheet').view;
    const el = view && view.cur;
    if (!el) return;
    const { row, box, scrollable } = el.m;
    const at = row.indexOf(document.activeElement);
    const base = at >= 0 ? at : row.indexOf(el.m.focus);
    const card = S.screen === 'card' ? S.cards[S.cards.length - 1] : null;
    const page = (d) => {
      // Only a page still taller than its box (after fitting) scrolls first.
      const room = !scrollable ? 0 : d > 0 ? box.scrollHeight - box.clientHeight - box.scrollTop : box.scrollTop;
      if (room > 1) { box.scrollBy(0, d * box.clientHeight * 0.8); el.scrolled = true; return; }
      if (card) cardPage(card, card.page + d); else promptPage(S.prompt.page + d);
    };
    switch (e.key) {
      case 'ArrowDown': case 'PageDown': page(1); break;
      case 'ArrowUp': case 'PageUp': page(-1); break;
      // Before the page's control has the focus, ←/→ move from it.
      case 'ArrowRight': if (row.length) row[Math.min(base + 1, row.length - 1)].focus(); break;
      case 'ArrowLeft': if (row.length) row[Math.max(base - 1, 0)].focus(); break;
      case 'Escape': case 'Backspace':
        if (card) cardPage(card, card.page - 1);
        else if (S.prompt.page > 1) promptPage(S.prompt.page - 1);
        else backOut();
        break;
      case 'Enter': case ' ':
        if (at >= 0) return; // the focused control clicks itself
        if (el.m.focus) el.m.focus.click(); // the one about to be focused
        break;
      default: return;
    }
    e.preventDefault();
  }

  // On the conversation: ↑/↓ move between the reply (which then scrolls),
  // a waiting prompt and the message box; ←/→ stay with the text caret.
  function talkKey(e) {
    const caption = $('caption');
    const order = [caption, $('pending'), $('help'), $('retry'), $('msg')].filter((el) => !el.hidden);
    const at = order.indexOf(document.activeElement);
    const scrollable = caption.scrollHeight > caption.clientHeight + 1;
    switch (e.key) {
      case 'ArrowUp': {
        if (at === 0) { caption.scrollBy(0, -120); break; }
        const prev = order.slice(0, at < 0 ? order.length : at).reverse().find((el) => el !== caption || scrollable);
        if (!prev) return;
        prev.focus();
        break;
      }
      case 'ArrowDown': {
        if (at === 0 && caption.scrollTop + caption.clientHeight < caption.scrollHeight - 1) { caption.scrollBy(0, 120); break; }
        const next = order.slice(at + 1).find((el) => el !== caption);
        if (!next) return;
        next.focus();
        break;
      }
      case 'Escape':
        if (document.activeElement === $('msg')) return;
        $('msg').focus();
        break;
      default: return;
    }
    e.preventDefault();
  }

  document.addEventListener('keydown', (e) => {
    if (e.defaultPrevented || e.isComposing) return;
    if (S.screen === 'card' || S.screen === 'prompt') sheetKey(e);
    else if (S.screen === 'talk') talkKey(e);
  });

  $('sheet').addEventListener('click', (e) => {
    const el = e.target.closest('[data-ctl]');
    if (!el) return;
    const id = el.dataset.ctl;
    if (S.screen === 'card') {
      const card = S.cards[S.cards.length - 1];
      if (id === 'next') cardPage(card, card.page + 1);
      else if (id === 'done') closeCard();
      // call:/text: links open on their own (tel:, sms:).
      return;
    }
    if (S.screen !== 'prompt') return;
    if (id === 'approve') decide(true);
    else if (id === 'decline') decide(false);
    else if (id === 'next') promptPage(S.prompt.page + 1);
  });

  $('pending').addEventListener('click', () => {
    if (!S.waiting) return;
    S.prompt = S.waiting;
    S.waiting = null;
    S.prompt.page = 1;
    drawChip();
    showPrompt();
  });

  // Help lines: the last safety card again, from its first page, as it
  // was laid out for this display (its pages were acknowledged already).
  $('help').addEventListener('click', () => {
    const card = S.lastCard;
    if (!card || S.cards.includes(card)) return;
    card.page = 1;
    S.cards.push(card);
    showCard(card);
  });

  $('retry').addEventListener('click', () => {
    S.replaced = false;
    $('retry').hidden = true;
    $('msg').focus();
    connect();
  });

  $('composer').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = $('msg').value.trim();
    if (!text) return;
    if ([...text].length > MAX_CHARS) { notice('That message is too long to send.'); return; }
    if (!send({ type: 'input.text', text })) { notice('Not connected yet, so it wasn’t sent. Your words are still in the box.'); return; }
    $('msg').value = '';
  });

  $('pair-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const code = $('code').value.trim();
    if (code) pairWith(code);
  });

  document.addEventListener('visibilitychange', visibility);
  addEventListener('pagehide', () => { if (!document.hidden) visibility(); });
  addEventListener('online', () => { if (!S.ws) connect(); });
  addEventListener('offline', () => { if (!S.ws) status('No network. VERA reconnects when you’re back online.', true); });

  // ---- offline start ----------------------------------------------------------
  function registerWorker() {
    if (!('serviceWorker' in navigator) || params.has('nosw')) return;
    const go = () => navigator.serviceWorker.register('/glasses/sw.js', { scope: '/glasses', updateViaCache: 'none' })
      .then((r) => { S.swReg = r; }).catch(() => {});
    if (document.readyState === 'complete') go(); else addEventListener('load', go, { once: true });
  }

  // ?swreset=1 drops the worker and its caches (no DevTools on the glasses).
  async function resetWorker() {
    for (const r of await navigator.serviceWorker.getRegistrations()) await r.unregister();
    for (const k of await caches.keys()) if (k.startsWith('vera-glasses-')) await caches.delete(k);
    params.delete('swreset');
    location.replace(location.pathname + (params.toString() ? '?' + params : ''));
  }

  const code = new URLSearchParams(location.hash.slice(1)).get('pair');
  if (code) history.replaceState(null, '', location.pathname + location.search);
  if (params.has('swreset') && 'serviceWorker' in navigator) { resetWorker(); return; }
  registerWorker();
  if (code && !S.pairing && !S.token) pairWith(code);
  else if (!S.token && !S.pairing && auth !== 'dev') showPair('');
  else { toTalk(); connect(); }
})();
