// Inlined in the page: starts the pairing refresh while the app's script is
// still on its way (on the glasses' link that is a few hundred ms saved on
// the way to connected). The app takes the answer from window.__veraBoot.
(function () {
  try {
    var p = JSON.parse(localStorage.getItem('vera.glasses.pairing') || 'null');
    if (!p || !p.refresh_token || p.device !== 'meta-rayban-display' || /[?&]token=/.test(location.search)) return;
    window.__veraBoot = fetch('/v1/pairings/refresh', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ refresh_token: p.refresh_token, device: p.device }), cache: 'no-store', credentials: 'omit' })
      .then(function (r) { r.at = Date.now(); return r; });
  } catch (e) { /* no storage: the app pairs */ }
})();
