/* Giants' final count by taps (/games/giants/count): the host taps each Moai standing on an Ahu
 * onto the drawn island with a brush (owner, size, headdress), then enters each player's place
 * on the track and Rongo half-tablets. Every change goes whole to the companion, which scores
 * it with the engine's own scorer (the same as `companion score --game giants FILE`); guests
 * follow read-only. Vanilla JS. */
(function () {
  'use strict';

  var common = window.CompanionCommon, giants = window.CompanionGiants;
  var el = common.el, clear = common.clear, byId = common.byId, toast = common.toast;
  var RONGO_CHIPS = 4;                 // Rongo halves offered as one tap each; "+" goes beyond
  var ROWS = { transport: 'Transport (the track)', moai: 'Moai', headdresses: 'Headdresses', rongo: 'Rongo tablets' };

  var state = JSON.parse(byId('initial-state').textContent);
  var csrf = state.you.csrf || '';
  var draft = copy(state.count);
  var brush = { owner: null, size: 1, headdress: false };
  var sending = false, pending = false;

  function copy(value) { return value ? JSON.parse(JSON.stringify(value)) : null; }

  function post(url, body) { return common.post(url, body, csrf); }

  // Sends the draft (the latest one, once the previous send is answered). A count the scorer
  // refuses is said in one sentence and the draft goes back to the last one it took.
  function send() {
    if (sending) { pending = true; return; }
    sending = true;
    post('/api/games/giants/count', { count: draft }).then(function (data) {
      state.count = copy(draft);
      state.score = data.score;
      state.version = data.version;
    }, function (error) {
      toast(error.message, 'error');
      draft = copy(state.count);
    }).then(function () {
      sending = false;
      if (pending) { pending = false; send(); }
      render();
    });
  }

  function refresh() {
    return fetch('/api/games/giants/count', { cache: 'no-store', credentials: 'same-origin' })
      .then(function (response) { return response.json(); })
      .then(function (fresh) {
        common.setLive('live');
        if (fresh.you.csrf) csrf = fresh.you.csrf;
        // The host's own draft leads while there is one (it may hold a number being typed).
        var keep = fresh.you.host && draft && fresh.count;
        state = fresh;
        if (!keep) draft = copy(state.count);
        render();
      }, function () { common.setLive('offline'); });
  }

  // ------------------------------------------------------------------ entering

  function startCount(names, open) {
    var count = { game: 'giants', players: names, open_scoring: open, track: {}, rongo_halves: {}, moai: [] };
    names.forEach(function (n) { count.track[n] = 0; count.rongo_halves[n] = 0; });
    draft = count;
    brush.owner = names[0];
    send();
    render();
  }

  function ahuOrder(id) {
    for (var i = 0; i < state.island.ahus.length; i++) if (state.island.ahus[i].id === id) return i;
    return -1;
  }

  function tapAhu(ahu) {
    var moai = draft.moai, at = -1;
    moai.forEach(function (m, i) { if (m.ahu === ahu.id) at = i; });
    var same = at >= 0 && moai[at].owner === brush.owner && moai[at].size === brush.size
      && !!moai[at].headdress === brush.headdress;
    if (at >= 0) moai.splice(at, 1);
    if (!same) {
      moai.push({ owner: brush.owner, size: brush.size, ahu: ahu.id, headdress: brush.headdress });
      moai.sort(function (a, b) { return ahuOrder(a.ahu) - ahuOrder(b.ahu); });
    }
    render();
    send();
  }

  function chip(text, chosen, attrs, onclick) {
    var a = attrs || {};
    a.type = 'button';
    a.class = 'chip' + (chosen ? ' chosen' : '');
    a['aria-pressed'] = String(!!chosen);
    a.text = text;
    a.onclick = onclick;
    return el('button', a);
  }

  function renderBrush(names) {
    var box = clear(byId('brush'));
    if (!state.you.host) { box.hidden = true; return; }
    box.hidden = false;
    if (names.indexOf(brush.owner) < 0) brush.owner = names[0];
    var owners = el('div', { class: 'g-chips' }, [el('span', { class: 'g-chips-title', text: 'Base of' })]);
    names.forEach(function (n) {
      owners.appendChild(chip('', brush.owner === n, { 'data-owner': n }, function () { brush.owner = n; render(); }));
      owners.lastChild.appendChild(el('span', { class: 'swatch', 'data-colour': giants.colourName(names, n) }));
      owners.lastChild.appendChild(document.createTextNode(n));
    });
    var sizes = el('div', { class: 'g-chips' }, [el('span', { class: 'g-chips-title', text: 'Moai of size' })]);
    [1, 2, 3].forEach(function (s) {
      sizes.appendChild(chip(String(s), brush.size === s, { 'data-size': s }, function () { brush.size = s; render(); }));
    });
    sizes.appendChild(chip('with headdress', brush.headdress, { 'data-headdress': 'yes' },
      function () { brush.headdress = !brush.headdress; render(); }));
    box.appendChild(owners);
    box.appendChild(sizes);
    box.appendChild(el('p', { class: 'hint', text: 'Tap each Ahu that holds a Moai; tapping it again with the same choice takes it off.' }));
  }

  function renderTrack(count) {
    var box = byId('track');
    if (box.contains(document.activeElement) && document.activeElement.tagName === 'INPUT') return;  // typing
    clear(box);
    var host = state.you.host;
    var grid = el('div', { class: 'count-grid' }, [el('span'), el('strong', { text: 'Track' }),
      el('strong', { text: 'Rongo tablets' })]);
    count.players.forEach(function (n) {
      grid.appendChild(el('span', {}, [el('span', { class: 'swatch', 'data-colour': giants.colourName(count.players, n) }), n]));
      if (host) {
        grid.appendChild(el('input', { type: 'number', min: 0, step: 1, inputmode: 'numeric', value: count.track[n],
          'aria-label': 'track of ' + n, 'data-track': n,
          oninput: function (e) {
            var v = parseInt(e.target.value, 10);
            draft.track[n] = isNaN(v) ? -1 : v;
          },
          onchange: function () { send(); } }));
        var halves = el('div', { class: 'g-chips rongo-chips', role: 'radiogroup', 'aria-label': 'Rongo halves of ' + n },
          [el('span', { class: 'g-chips-title', text: 'Rongo halves' })]);
        for (var k = 0; k <= RONGO_CHIPS; k++) {
          (function (k) {
            halves.appendChild(chip(String(k), count.rongo_halves[n] === k, { 'data-rongo': n, 'data-halves': k },
              function () { draft.rongo_halves[n] = k; render(); send(); }));
          })(k);
        }
        if (count.rongo_halves[n] > RONGO_CHIPS) halves.appendChild(chip(String(count.rongo_halves[n]), true, {}, function () {}));
        halves.appendChild(chip('+', false, { 'aria-label': 'one more Rongo half for ' + n },
          function () { draft.rongo_halves[n] += 1; render(); send(); }));
        grid.appendChild(el('span', { text: tablets(count.rongo_halves[n]) }));
        grid.appendChild(halves);
      } else {
        grid.appendChild(el('span', { text: String(count.track[n]) }));
        grid.appendChild(el('span', { text: tablets(count.rongo_halves[n]) }));
      }
    });
    box.appendChild(grid);
    if (count.open_scoring) box.appendChild(el('p', { class: 'hint', text: 'Open scoring: the track already holds each Moai\'s points (not the headdresses\').' }));
  }

  function tablets(halves) {
    return Math.floor(halves / 2) + ' (' + halves + (halves === 1 ? ' half' : ' halves') + ')';
  }

  function scoreTable(score) {
    var players = score.players;
    var rows = score.rows ? score.rows.points : ['transport', 'moai', 'headdresses', 'rongo'];
    function lead(p) { return score.winners.indexOf(p.name) >= 0; }
    function line(key, text, cls) {
      return el('tr', { class: cls || null, 'data-row': key }, [el('th', { scope: 'row', text: text })].concat(
        players.map(function (p) { return el('td', { class: lead(p) ? 'lead' : '', text: String(p[key]) }); })));
    }
    return el('table', { class: 'scores final-table' }, [
      el('thead', {}, [el('tr', {}, [el('th', { scope: 'col', text: '' })].concat(players.map(function (p) {
        return el('th', { scope: 'col', class: lead(p) ? 'lead' : '', text: (lead(p) ? '★ ' : '') + p.name });
      })))]),
      el('tbody', {}, rows.map(function (key) { return line(key, ROWS[key] || key); })
        .concat([line('total', 'Total', 'total')]))]);
  }

  // ------------------------------------------------------------------ render

  function render() {
    var host = state.you.host, count = host ? draft : state.count;
    byId('guest-note').hidden = host;
    byId('setup-card').hidden = !host || !!count;
    byId('island-card').hidden = !count;
    byId('track-card').hidden = !count;
    byId('score-card').hidden = !state.score;
    byId('gc-clear').hidden = !host;
    if (!count) {
      byId('count-title').textContent = host ? 'Final count: who played?' : 'No count yet';
      return;
    }
    var names = count.players;
    var onAhu = {};
    count.moai.forEach(function (m) { onAhu[m.ahu] = { owner: m.owner, size: m.size, headdress: !!m.headdress }; });
    byId('moai-facts').textContent = count.moai.length + ' Moai, '
      + count.moai.filter(function (m) { return m.headdress; }).length + ' with a headdress';
    renderBrush(names);
    var island = clear(byId('count-island'));
    island.appendChild(giants.drawIsland(state.island, state.layout, {
      names: names, count: onAhu,
      onAhu: host ? tapAhu : null,
      label: host ? 'The island: tap each Ahu that holds a Moai' : 'The island at the end of the game'
    }));
    renderTrack(count);
    if (state.score) {
      var w = state.score.winners;
      byId('count-title').textContent = '★ ' + w.join(' and ') + (w.length > 1 ? ' share the win' : ' wins');
      byId('winners').textContent = w.length > 1 ? 'Tied on points: the rulebook has no tie-break, so they share the win.' : '';
      clear(byId('score')).appendChild(scoreTable(state.score));
      var text = JSON.stringify(state.count, null, 1);
      byId('count-json').textContent = text;
      var link = byId('count-file');
      if (link.href && link.href.indexOf('blob:') === 0) URL.revokeObjectURL(link.href);
      link.href = URL.createObjectURL(new Blob([text + '\n'], { type: 'application/json' }));
    }
  }

  // Names are optional: a count of players alone names them by colour (Red, Blue, ...).
  function typedNames() {
    return byId('gc-names').value.split('\n').map(function (n) { return n.trim(); }).filter(function (n) { return n; });
  }
  byId('setup-form').addEventListener('submit', function (event) {
    event.preventDefault();
    startCount(typedNames(), byId('gc-open').checked);
  });
  [3, 4, 5].forEach(function (n) {
    byId('gc-players').appendChild(el('button', { type: 'button', class: 'chip', 'data-players': n, text: n + ' players',
      onclick: function () {
        var names = typedNames();
        if (!names.length) {
          names = giants.COLOUR_NAMES.slice(0, n).map(function (c) { return c.charAt(0).toUpperCase() + c.slice(1); });
        }
        startCount(names, byId('gc-open').checked);
      } }));
  });
  byId('gc-clear').addEventListener('click', function () {
    post('/api/games/giants/count/clear', {}).then(function () { draft = null; return refresh(); },
      function (error) { toast(error.message, 'error'); });
  });

  if (draft && draft.players) brush.owner = draft.players[0];
  render();
  common.follow('/games/giants/count/events', function (version) { if (version !== state.version) refresh(); });
})();
