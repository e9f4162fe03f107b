// VERA glasses app service worker: an offline start from the cache of this
// build only. The page is fetched network-first (an upgraded gateway is
// seen on the launch it ships); the cached copy answers only when the
// gateway cannot be reached. Hashed assets are immutable: cache-first.
// The cache is named by the build, and activation deletes every other
// build's cache, so nothing stale survives an upgrade.
'use strict';
const BUILD = '{{BUILD}}';
const CACHE = 'vera-glasses-' + BUILD;
const SHELL = '/glasses';
const ASSETS = {{ASSETS}};
const MARKER = '<meta name="vera-build" content="' + BUILD + '">';

// shell caches the page of this build: from the HTTP cache when it holds
// this build (no extra download on first load), else from the network.
// A page of another build means a newer worker is coming: fail install.
async function shell(cache) {
  for (const mode of ['force-cache', 'no-cache']) {
    const res = await fetch(new Request(SHELL, { cache: mode, credentials: 'same-origin' }));
    if (res.ok && (await res.clone().text()).includes(MARKER)) {
      await cache.put(SHELL, res);
      return;
    }
  }
  throw new Error('the gateway serves another build of the glasses app');
}

self.addEventListener('install', (e) => {
  e.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await shell(cache);
    await Promise.all(ASSETS.map((u) => cache.add(new Request(u, { cache: 'force-cache' }))));
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (e) => {
  e.waitUntil((async () => {
    for (const k of await caches.keys()) {
      if (k.startsWith('vera-glasses-') && k !== CACHE) await caches.delete(k);
    }
    await self.clients.claim();
  })());
});

self.addEventListener('fetch', (e) => {
  const req = e.request;
  const url = new URL(req.url);
  if (req.method !== 'GET' || url.origin !== self.location.origin) return;
  if (req.mode === 'navigate' && url.pathname === SHELL) {
    e.respondWith((async () => {
      try {
        const res = await fetch(req);
        if (res.ok || res.status === 304) return res;
        const cached = await (await caches.open(CACHE)).match(SHELL);
        return cached || res;
      } catch (err) {
        const cached = await (await caches.open(CACHE)).match(SHELL);
        if (cached) return cached;
        throw err;
      }
    })());
    return;
  }
  if (ASSETS.includes(url.pathname)) {
    e.respondWith((async () => (await (await caches.open(CACHE)).match(url.pathname)) || fetch(req))());
  }
});
