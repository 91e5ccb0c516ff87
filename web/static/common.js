/* What every page shares (the Māori table, the host page, the board games): building elements,
 * the toast, the live badge, posting to the API and following a session's event stream
 * (web/sse.py). Loaded before app.js or games.js; vanilla JS, nothing from the internet. */
(function () {
  'use strict';

  var SVGNS = 'http://www.w3.org/2000/svg';

  // An element (HTML, or SVG with `ns`) with its attributes and children. `text` sets the text;
  // an `on...` function listens to that event; null, undefined and false leave an attribute out.
  function build(doc, ns, tag, attrs, children) {
    var node = ns ? doc.createElementNS(ns, tag) : doc.createElement(tag);
    var key;
    for (key in attrs || {}) {
      if (!Object.prototype.hasOwnProperty.call(attrs, key)) continue;
      var value = attrs[key];
      if (value === null || value === undefined || value === false) continue;
      if (key === 'text') node.textContent = value;
      else if (key.slice(0, 2) === 'on' && typeof value === 'function') {
        node.addEventListener(key.slice(2), value);
      } else node.setAttribute(key, value === true ? '' : String(value));
    }
    (children || []).forEach(function (child) {
      if (child === null || child === undefined || child === false) return;
      node.appendChild(typeof child === 'string' || typeof child === 'number'
        ? doc.createTextNode(String(child)) : child);
    });
    return node;
  }
  function el(tag, attrs, children) { return build(document, null, tag, attrs, children); }
  function sv(tag, attrs, children) { return build(document, SVGNS, tag, attrs, children); }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function byId(id) { return document.getElementById(id); }

  function toast(message, kind) {
    var box = byId('toast');
    box.textContent = message;
    box.className = 'toast ' + (kind || 'error');
    box.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(function () { box.hidden = true; }, kind === 'ok' ? 3000 : 7000);
  }

  function setLive(mode) {
    var live = byId('live');
    live.className = 'live ' + mode;
    live.textContent = { live: 'live', connecting: 'connecting…', offline: 'reconnecting…' }[mode];
  }

  // POSTs `body` (an empty object when none) as JSON to `url` with `csrf` in X-CSRF-Token.
  // Resolves to the answer's JSON; a refusal rejects with an Error whose message is the
  // companion's sentence and whose `status` is the HTTP status.
  function post(url, body, csrf) {
    return fetch(url, {
      method: 'POST', credentials: 'same-origin', cache: 'no-store',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
      body: JSON.stringify(body || {})
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        if (!response.ok) {
          var error = new Error(data.error || ('The companion answered ' + response.status + '.'));
          error.status = response.status;
          throw error;
        }
        return data;
      });
    });
  }

  // Follows the event stream at `url`: `changed(version)` for each `state` event. Reconnects
  // with a backoff from 1 s doubling to 30 s, and at once when the phone wakes.
  function follow(url, changed) {
    var source = null, backoff = 1000, retryTimer = null;
    function connect() {
      retryTimer = null;
      if (source) source.close();
      source = new EventSource(url);
      source.addEventListener('open', function () { backoff = 1000; setLive('live'); });
      source.addEventListener('state', function (event) {
        var version;
        try { version = JSON.parse(event.data).version; } catch (e) { version = null; }
        changed(version);
      });
      source.addEventListener('error', function () {
        setLive('offline');
        source.close();
        source = null;
        if (!retryTimer) retryTimer = setTimeout(connect, backoff);
        backoff = Math.min(backoff * 2, 30000);
      });
    }
    document.addEventListener('visibilitychange', function () {
      if (document.visibilityState === 'visible' && !source && !retryTimer) connect();
    });
    connect();
  }

  window.CompanionCommon = {
    SVGNS: SVGNS, build: build, el: el, sv: sv, clear: clear, byId: byId, toast: toast,
    setLive: setLive, post: post, follow: follow
  };
})();
