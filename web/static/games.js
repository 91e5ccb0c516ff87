/* The board games beside Māori (Tongiaki, Giants): whose turn, the map or the Ahus, the scores,
 * and for the host the legal moves as buttons. Draws everything from /api/games/state and
 * follows /games/events (common.js) for each change. Vanilla JS, nothing from the internet. */
(function () {
  'use strict';

  var HEX = 40;              // a hex's corner radius in map units
  var SHOWN = 40;            // buttons shown before "find a move" is needed
  var BOATS = {
    red: '#d63a2f', blue: '#2f63c9', yellow: '#f2c230', orange: '#ee8a2a', green: '#2f9a4a',
    purple: '#8a4fc2'
  };

  var current = JSON.parse(document.getElementById('initial-state').textContent);
  var csrf = current.you.csrf || '';
  var ui = { hex: null, search: '', busy: false };

  var common = window.CompanionCommon;
  var el = common.el, sv = common.sv, clear = common.clear, byId = common.byId;
  var toast = common.toast, setLive = common.setLive;
  function words(key) { return key.replace(/_/g, ' ').replace(/^./, function (c) { return c.toUpperCase(); }); }

  // ------------------------------------------------------------------ API

  function post(url, body) { return common.post(url, body, csrf); }

  function act(url, body, after) {
    if (ui.busy) return;
    ui.busy = true;
    post(url, body).then(function (data) {
      toast(data.text || 'Done.', 'ok');
      ui.hex = null;
      ui.search = byId('moves-search').value = '';
      if (after) after();
    }, function (error) { toast(error.message, 'error'); })
      .then(function () { ui.busy = false; return refresh(); });
  }

  // Asks with the version shown: the answer is the whole state only when something changed.
  // While a move sent waits for its answer the page keeps the state it was tapped on: the
  // answer clears the taps and then draws the next state, so a tap on the next state is kept.
  var fetching = false, again = false;
  function refresh(whole) {
    if (fetching || ui.busy) { again = true; return Promise.resolve(); }
    fetching = true;
    var url = '/api/games/state' + (whole ? '' : '?since=' + encodeURIComponent(current.version));
    return fetch(url, { cache: 'no-store', credentials: 'same-origin' })
      .then(function (response) { return response.json(); })
      .then(function (state) {
        setLive('live');
        if (!state.unchanged) { current = state; render(); }
        return state.unchanged && state.you.host !== current.you.host;
      }, function () { setLive('offline'); return false; })
      .then(function (needWhole) {
        fetching = false;
        if (needWhole || again) { again = false; return refresh(needWhole); }
        return null;
      }, function (error) { fetching = false; throw error; });
  }

  // ------------------------------------------------------------------ banner & scores

  function renderBanner(game) {
    var title = byId('whose-turn'), sub = byId('phase');
    var banner = byId('banner');
    banner.className = 'banner' + (game && game.over ? ' over' : '');
    if (!game) { title.textContent = 'No game yet'; sub.textContent = 'The host starts one.'; return; }
    if (game.over) {
      title.textContent = '★ ' + game.score.winners.join(' and ') + (game.score.winners.length > 1 ? ' win' : ' wins');
    } else {
      title.textContent = (game.to_move || '…') + '’s turn';
    }
    sub.textContent = game.title + ' · ' + game.phase;
  }

  // The rows and their order: scores.js, the same wherever a score is drawn.
  function scoreTable(score, final) { return window.CompanionScores.table(score, final); }

  function renderScores(game) {
    var final = clear(byId('final'));
    clear(byId('scores'));
    byId('scores-card').hidden = !game || game.over;
    final.hidden = !game || !game.over;
    if (!game) return;
    if (game.over) {
      final.appendChild(el('h2', { text: 'Final score' }));
      if (game.score.winners.length > 1) {
        final.appendChild(el('p', { class: 'winners', text: '★ ' + game.score.winners.join(' and ') + ' share the win' }));
      }
      final.appendChild(el('div', { class: 'scroll-x' }, [scoreTable(game.score, true)]));
    } else {
      byId('scores').appendChild(scoreTable(game.score, false));
    }
  }

  function simpleTable(head, rows) {
    return el('table', { class: 'scores facts-table' }, [
      el('thead', {}, [el('tr', {}, head.map(function (h) { return el('th', { scope: 'col', text: h }); }))]),
      el('tbody', {}, rows.map(function (row) {
        return el('tr', {}, row.map(function (cell, i) {
          return i === 0 ? el('th', { scope: 'row', text: String(cell) }) : el('td', { text: String(cell) });
        }));
      }))
    ]);
  }

  // ------------------------------------------------------------------ saving & damage

  function renderUnsaved(state) {
    var box = clear(byId('unsaved'));
    box.hidden = !state.unsaved;
    if (!state.unsaved) return;
    box.appendChild(el('h2', { text: 'Not saved' }));
    box.appendChild(el('p', { class: 'question-reason', text: state.unsaved }));
    box.appendChild(el('p', { class: 'hint', text: 'The last change was not made: make it again once the companion can save.' }));
  }

  function renderDamage(state) {
    var box = clear(byId('damage'));
    var damage = state.damage;
    box.hidden = !damage;
    if (!damage) return;
    box.appendChild(el('h2', { text: 'The saved game is damaged' }));
    box.appendChild(el('p', { class: 'question-reason', text: 'What is wrong: ' + damage.problem + '.' }));
    if (damage.kept) {
      box.appendChild(el('p', { class: 'hint', text: 'A copy of the damaged file is kept as ' + damage.kept
        + ' in the companion’s state folder.' }));
    }
    if (!state.you.host) {
      box.appendChild(el('p', { class: 'hint', text: 'The host chooses how to go on.' }));
      return;
    }
    var actions = el('div', { class: 'actions' });
    if (damage.moves !== null) {
      actions.appendChild(el('button', { type: 'button', class: 'primary', id: 'btn-resume-saved',
        text: damage.moves ? 'Resume after move ' + damage.moves + ', the last good one'
          : 'Resume the game as it was set up',
        onclick: function () { act('/api/games/resume', {}); } }));
    }
    actions.appendChild(el('button', { type: 'button', id: 'btn-damage-new', text: 'Start a new game',
      onclick: function () { showForm(true); byId('newgame').scrollIntoView(); } }));
    box.appendChild(actions);
  }

  // ------------------------------------------------------------------ Tongiaki's map

  function centre(q, r) { return [HEX * Math.sqrt(3) * (q + r / 2), HEX * 1.5 * r]; }
  function corners(x, y, size) {
    var points = [];
    for (var i = 0; i < 6; i++) {
      var a = Math.PI / 180 * (60 * i - 30);
      points.push((x + size * Math.cos(a)).toFixed(1) + ',' + (y + size * Math.sin(a)).toFixed(1));
    }
    return points.join(' ');
  }
  function edgePoint(x, y, edge, reach) {
    var a = Math.PI / 180 * (60 * edge);
    return [x + reach * Math.cos(a), y + reach * Math.sin(a)];
  }

  function involves(action, hex, fleet) {
    if (!hex) return true;
    if (action.q === hex.q && action.r === hex.r) return true;
    if (!hex.tile) return false;
    if (action.island === hex.tile) return true;
    if (action.take && action.take[0] === hex.tile) return true;
    return action.type === 'land' && fleet && fleet.island === hex.tile;
  }

  function tapHex(q, r, tile, name) {
    var same = ui.hex && ui.hex.q === q && ui.hex.r === r;
    ui.hex = same ? null : { q: q, r: r, tile: tile, name: name || tile };
    render();
  }

  function hexNode(h, ghost, newest) {
    var c = centre(h.q, h.r), x = c[0], y = c[1];
    var chosen = ui.hex && ui.hex.q === h.q && ui.hex.r === h.r;
    var kind = ghost ? 'ghost' : h.kind;
    var name = h.name || h.tile;
    var g = sv('g', {
      class: 'hex hex-' + kind + (chosen ? ' chosen' : '') + (newest ? ' newest' : ''), 'data-q': h.q, 'data-r': h.r,
      'data-tile': ghost ? null : h.tile, role: 'button', tabindex: 0,
      'aria-label': ghost ? 'empty sea at ' + h.q + ', ' + h.r
        : name + (newest ? ' (laid last)' : '') + ' at ' + h.q + ', ' + h.r,
      onclick: function () { tapHex(h.q, h.r, ghost ? null : h.tile, name); },
      onkeydown: function (event) { if (event.key === 'Enter') tapHex(h.q, h.r, ghost ? null : h.tile, name); }
    });
    g.appendChild(sv('polygon', { points: corners(x, y, HEX - 1), class: 'hex-shape' }));
    if (ghost) return g;
    if (h.kind === 'water') {
      (h.routes || []).forEach(function (route) {
        var a = edgePoint(x, y, route[0], HEX * 0.86), b = edgePoint(x, y, route[1], HEX * 0.86);
        g.appendChild(sv('path', { class: 'route', d: 'M' + a[0].toFixed(1) + ' ' + a[1].toFixed(1)
          + ' Q' + x.toFixed(1) + ' ' + y.toFixed(1) + ' ' + b[0].toFixed(1) + ' ' + b[1].toFixed(1) }));
      });
      if (h.value) g.appendChild(sv('text', { x: x, y: y + 5, class: 'hex-value', 'text-anchor': 'middle', text: h.value }));
      return g;
    }
    g.appendChild(sv('circle', { cx: x, cy: y, r: HEX * 0.42, class: 'island' }));
    if (h.royal) g.appendChild(sv('circle', { cx: x, cy: y, r: HEX * 0.42, class: 'royal', stroke: BOATS[h.royal] || '#333' }));
    if (h.kind !== 'start') {
      g.appendChild(sv('text', { x: x, y: y + 3, class: 'hex-value', 'text-anchor': 'middle', text: h.value }));
    }
    g.appendChild(sv('text', { x: x, y: h.kind === 'start' ? y + 3 : y + 11, class: 'hex-name', 'text-anchor': 'middle', text: name }));
    // Each beach by its (first) pier: its number, then a berth per boat along the edge.
    (h.beaches || []).forEach(function (beach, i) {
      var edge = beach.piers.length ? beach.piers[0] : i;
      var p = edgePoint(x, y, edge, HEX * 0.56);
      var n = edgePoint(x, y, edge, HEX * 0.75);
      var along = edgePoint(0, 0, edge + 1.5, 6.5);  // across the pier's direction
      g.appendChild(sv('text', { x: n[0].toFixed(1), y: (n[1] + 2.5).toFixed(1), class: 'beach-number',
        'text-anchor': 'middle', text: i + 1 }));
      for (var k = 0; k < beach.berths; k++) {
        var colour = beach.boats && beach.boats[k];
        var t = k - (beach.berths - 1) / 2;
        g.appendChild(sv('circle', { cx: (p[0] + t * along[0]).toFixed(1), cy: (p[1] + t * along[1]).toFixed(1),
          r: 3, class: colour ? 'boat' : 'berth', fill: colour ? (BOATS[colour] || colour) : null }));
      }
    });
    return g;
  }

  function renderTongiaki(view, actions) {
    var board = clear(byId('board'));
    byId('board-title').textContent = 'Map';
    byId('board-facts').textContent = 'tiles left: ' + view.stack.islands
      + (view.stack.islands === 1 ? ' island, ' : ' islands, ') + view.stack.water + ' water';
    var hexes = view.map.slice();
    var seen = {};
    hexes.forEach(function (h) { seen[h.q + ',' + h.r] = true; });
    var ghosts = [];
    (actions || []).forEach(function (a) {
      var key = a.action.q + ',' + a.action.r;
      if (a.action.type === 'lay' && !seen[key]) { seen[key] = true; ghosts.push({ q: a.action.q, r: a.action.r }); }
    });
    var xs = [], ys = [];
    hexes.concat(ghosts).forEach(function (h) { var c = centre(h.q, h.r); xs.push(c[0]); ys.push(c[1]); });
    if (!xs.length) return;
    var pad = HEX + 4;
    var minX = Math.min.apply(null, xs) - pad, minY = Math.min.apply(null, ys) - pad;
    var w = Math.max.apply(null, xs) + pad - minX, h = Math.max.apply(null, ys) + pad - minY;
    var svg = sv('svg', { class: 'hexmap', viewBox: [minX, minY, w, h].map(function (n) { return n.toFixed(1); }).join(' '),
      role: 'group', 'aria-label': 'The map: tap a hex to see its moves' });
    var newest = hexes.length > 1 ? view.newest : null;
    hexes.forEach(function (hx) {
      svg.appendChild(hexNode(hx, false, newest && newest.q === hx.q && newest.r === hx.r));
    });
    ghosts.forEach(function (hx) { svg.appendChild(hexNode(hx, true, false)); });
    // The whole map in the card at every stage: scaled to its width (and to most of the
    // screen's height), a small map no more than twice its drawn size.
    svg.style.maxWidth = Math.round(w * 2) + 'px';
    svg.style.maxHeight = '70vh';
    board.appendChild(svg);
    if (newest) {
      var laid = hexes.filter(function (hx) { return hx.q === newest.q && hx.r === newest.r; })[0];
      board.appendChild(el('p', { class: 'hint newest-note', text: 'Laid last (ringed): '
        + (laid && laid.kind === 'water' ? 'water' + (laid.value ? ' (' + laid.value + ')' : '') : (laid ? laid.name : newest.tile)) }));
    }
    if (view.revealed) {
      board.appendChild(el('p', { class: 'hint', text: 'Revealed: ' + view.revealed.kind + ' ' + view.revealed.tile
        + (view.revealed.value ? ' (' + view.revealed.value + ')' : '') + ': tap a dashed hex to lay it.' }));
    }
    if (view.fleet) {
      board.appendChild(el('p', { class: 'hint', text: 'Landing at ' + (view.fleet.name || view.fleet.island) + ': ' + view.fleet.boats.join(', ') }));
    }
    (view.news || []).forEach(function (line) { board.appendChild(el('p', { class: 'hint', text: line })); });
    var players = clear(byId('players'));
    players.appendChild(simpleTable(['Player', 'Boats left', 'On beaches', 'Royal islands'],
      view.players.map(function (p) {
        return [(p.to_move ? '▶ ' : '') + p.name + ' (' + p.colour + ')', p.supply, p.on_beaches, p.royal_islands];
      })));
  }

  // ------------------------------------------------------------------ Giants (giants.js)

  function renderGiants(game) {
    window.CompanionGiants.render(game, {
      host: current.you.host,
      act: function (action, after) { act('/api/games/action', { action: action, version: current.version }, after); },
      rerender: render
    });
  }

  // ------------------------------------------------------------------ the host's moves

  function renderActions(game) {
    var card = byId('moves');
    card.hidden = !game || !current.you.host;
    if (card.hidden) return;
    byId('btn-undo').disabled = !game.can_undo;
    var list = clear(byId('action-list'));
    var giants = game.key === 'giants';
    byId('moves-search').hidden = giants;
    if (giants) {  // moves are entered on the island; the list stays folded away
      byId('moves-filter').textContent = game.over ? '' : 'Tap the island above: a piece or load, then where it goes.';
      if (game.over) { list.appendChild(el('p', { class: 'hint', text: 'The game is over.' })); return; }
      var every = el('details', { class: 'more' }, [el('summary', { text: 'Every move as a list (' + game.actions.length + ')' })]);
      every.addEventListener('toggle', function () {
        if (!every.open || every.childNodes.length > 1) return;
        game.actions.forEach(function (a) {
          every.appendChild(el('button', { type: 'button', class: 'action', text: a.label,
            onclick: function () { act('/api/games/action', { action: a.action, version: current.version }); } }));
        });
      });
      list.appendChild(every);
      return;
    }
    var fleet = game.view.fleet;
    var search = ui.search.toLowerCase();
    var matching = (game.actions || []).filter(function (a) {
      return involves(a.action, ui.hex, fleet) && a.label.toLowerCase().indexOf(search) >= 0;
    });
    var filter = byId('moves-filter');
    if (ui.hex) {
      filter.textContent = 'Moves on ' + (ui.hex.name || 'the hex ' + ui.hex.q + ', ' + ui.hex.r)
        + ': tap the hex again to see all.';
    } else {
      filter.textContent = game.key === 'tongiaki' ? 'Tap a hex on the map to see its moves.' : '';
    }
    if (game.over) { list.appendChild(el('p', { class: 'hint', text: 'The game is over.' })); return; }
    var groups = {};
    var order = [];
    matching.forEach(function (a) {
      var kind = a.action.type;
      if (!groups[kind]) { groups[kind] = []; order.push(kind); }
      groups[kind].push(a);
    });
    order.forEach(function (kind) {
      var box = el('div', { class: 'action-group' }, [el('h3', { text: words(kind) + ' (' + groups[kind].length + ')' })]);
      groups[kind].slice(0, SHOWN).forEach(function (a) {
        box.appendChild(el('button', { type: 'button', class: 'action', 'data-index': a.index, text: a.label,
          onclick: function () { act('/api/games/action', { action: a.action, version: current.version }); } }));
      });
      if (groups[kind].length > SHOWN) {
        box.appendChild(el('p', { class: 'hint', text: (groups[kind].length - SHOWN) + ' more: narrow them with the search box.' }));
      }
      list.appendChild(box);
    });
    if (!matching.length) list.appendChild(el('p', { class: 'hint', text: 'No move matches.' }));
  }

  // ------------------------------------------------------------------ render

  function render() {
    var game = current.game;
    var host = current.you.host;
    if (current.you.csrf) csrf = current.you.csrf;
    byId('host-note').hidden = host;
    byId('note-start').hidden = !!game;
    byId('note-playing').hidden = !game || game.over;
    byId('note-over').hidden = !game || !game.over;
    byId('newgame').hidden = !host;
    renderBanner(game);
    renderUnsaved(current);
    renderDamage(current);
    renderScores(game);
    byId('board-card').hidden = !game;
    byId('players-card').hidden = !game;
    if (game && game.key === 'tongiaki') renderTongiaki(game.view, game.actions);
    else if (game && game.key === 'giants') renderGiants(game);
    renderActions(game);
  }

  function showForm(open) {
    var toggle = byId('new-toggle');
    byId('newgame-form').hidden = !open;
    toggle.textContent = open ? 'Close' : 'Open';
    toggle.setAttribute('aria-expanded', String(open));
  }
  byId('new-toggle').addEventListener('click', function () { showForm(byId('newgame-form').hidden); });
  byId('newgame-form').addEventListener('submit', function (event) {
    event.preventDefault();
    var names = byId('ng-names').value.split('\n').map(function (n) { return n.trim(); })
      .filter(function (n) { return n; });
    if (byId('ng-game').value === 'maori') { window.location.href = '/host'; return; }
    var body = { game: byId('ng-game').value, names: names };
    var seed = byId('ng-seed').value;
    if (seed !== '') body.seed = parseInt(seed, 10);
    act('/api/games/new', body, function () { showForm(false); if (window.CompanionGiants) window.CompanionGiants.reset(); });
  });
  byId('ng-game').addEventListener('change', function (event) {
    if (event.target.value === 'maori') window.location.href = '/host';  // Māori's own set-up
  });
  byId('btn-undo').addEventListener('click', function () { act('/api/games/undo', {}); });
  byId('moves-search').addEventListener('input', function (event) {
    ui.search = event.target.value;
    renderActions(current.game);
  });

  var wanted = new URLSearchParams(window.location.search).get('new');
  if (wanted) byId('ng-game').value = wanted;
  if (current.you.host && (wanted || !current.game)) showForm(true);
  render();
  common.follow('/games/events', function (version) { if (version !== current.version) refresh(false); });
})();
