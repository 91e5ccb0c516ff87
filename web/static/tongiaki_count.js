/* Tongiaki's final count by taps (web/api/tongiaki.py): the host adds each island by its value,
 * steps each colour's boats on it or marks it royal, and the companion scores the count as
 * `companion score --game tongiaki` does, with the rulebook's tie-breaks. Guests read it.
 * Vanilla JS, nothing from the internet. */
(function () {
  'use strict';

  var BOATS = {
    red: '#d63a2f', blue: '#2f63c9', yellow: '#f2c230', orange: '#ee8a2a', green: '#2f9a4a',
    purple: '#8a4fc2'
  };
  var SEND_AFTER_MS = 250;   // taps in quick succession are sent as one count
  var POLL_MS = 3000;        // how often a guest's page asks whether the count changed

  var common = window.CompanionCommon;
  var el = common.el, clear = common.clear, byId = common.byId, toast = common.toast;
  var current = JSON.parse(document.getElementById('initial-state').textContent);
  var box = current.box;
  var host = current.you.host;
  var csrf = current.you.csrf || '';

  // The count being entered: names in seat order (empty: the colour's name) and the islands,
  // Tonga first; an island's boats by seat, its royal owner by seat (or null).
  var count = { names: [], islands: [] };

  function colourName(seat) { var c = box.colours[seat]; return c.charAt(0).toUpperCase() + c.slice(1); }
  function nameOf(seat) { return (count.names[seat] || '').trim() || colourName(seat); }

  function fromFile(data) {
    var names = data.players || [];
    count.names = names.map(function (n, seat) { return n === colourName(seat) ? '' : n; });
    count.islands = (data.islands || []).map(function (i) {
      var boats = {};
      Object.keys(i.boats || {}).forEach(function (name) { boats[names.indexOf(name)] = i.boats[name]; });
      return { value: i.value, boats: boats, royal: i.royal ? names.indexOf(i.royal) : null };
    });
  }

  function toFile() {
    var names = count.names.map(function (n, seat) { return nameOf(seat); });
    return {
      game: 'tongiaki',
      players: names,
      islands: count.islands.map(function (island) {
        if (island.royal !== null) return { value: island.value, royal: names[island.royal] };
        var boats = {};
        names.forEach(function (name, seat) { if (island.boats[seat]) boats[name] = island.boats[seat]; });
        return { value: island.value, boats: boats };
      })
    };
  }

  function startCount() {
    if (current.count) { fromFile(current.count); return; }
    var players = current.players || [];
    var n = players.length || 4;
    count.names = [];
    for (var seat = 0; seat < n; seat++) count.names.push(players[seat] || '');
    count.islands = [{ value: 0, boats: {}, royal: null }];
  }

  // ------------------------------------------------------------------ what the box allows

  function used(value) { return count.islands.filter(function (i) { return i.value === value; }).length; }
  function left(value) { return (box.values[String(value)] || 0) - used(value); }
  function onMap(seat) {
    return count.islands.reduce(function (sum, i) {
      return sum + (i.royal === seat ? 1 : (i.royal === null ? (i.boats[seat] || 0) : 0));
    }, 0);
  }
  function royals(seat) { return count.islands.filter(function (i) { return i.royal === seat; }).length; }

  // ------------------------------------------------------------------ sending and showing

  var timer = null, sending = false, again = false;
  function changed() {
    render();
    clearTimeout(timer);
    timer = setTimeout(send, SEND_AFTER_MS);
  }

  function send() {
    if (sending) { again = true; return; }
    sending = true;
    var file = toFile();
    common.post('/api/games/tongiaki/count', file, csrf).then(function (data) {
      current.version = data.version;
      current.score = data.score;
      current.count = file;
      showScore(null);
    }, function (error) { showScore(error.message); })
      .then(function () {
        sending = false;
        if (again) { again = false; send(); }
      });
  }

  function showScore(problem) {
    var error = byId('count-error');
    error.hidden = !problem;
    error.textContent = problem || '';
    var box2 = clear(byId('score'));
    var winners = byId('winners');
    var score = current.score;
    if (!score) {
      winners.textContent = host ? 'Enter the islands below: the score follows each tap.' : 'The host has not entered a count yet.';
      return;
    }
    var w = score.winners;
    winners.textContent = w.length ? '★ ' + w.join(' and ') + (w.length > 1 ? ' share the win' : ' wins') : '';
    box2.appendChild(window.CompanionScores.table(score, true));
    byId('count-file').textContent = JSON.stringify(current.count, null, 1);
  }

  // ------------------------------------------------------------------ the host's taps

  function stepper(label, value, minus, plus, attrs) {
    return el('div', { class: 'stepper', 'data-seat': attrs.seat }, [
      el('span', { class: 'who' }, [el('span', { class: 'swatch', style: null, 'data-colour': attrs.colour }), label]),
      el('button', { type: 'button', class: 'minus', 'aria-label': 'One ' + attrs.what + ' fewer for ' + label,
        disabled: !minus, onclick: minus }, ['−']),
      el('output', { text: String(value) }),
      el('button', { type: 'button', class: 'plus', 'aria-label': 'One ' + attrs.what + ' more for ' + label,
        disabled: !plus, onclick: plus }, ['+'])
    ]);
  }

  function paintSwatches(root) {
    Array.prototype.forEach.call(root.querySelectorAll('[data-colour]'), function (node) {
      node.style.background = BOATS[node.getAttribute('data-colour')] || '#999';
    });
  }

  function renderPlayers() {
    byId('players-n').textContent = String(count.names.length);
    byId('players-minus').disabled = count.names.length <= box.min_players;
    byId('players-plus').disabled = count.names.length >= box.max_players;
    var list = clear(byId('players-list'));
    count.names.forEach(function (name, seat) {
      var input = el('input', { type: 'text', maxlength: 24, value: name, placeholder: colourName(seat),
        'aria-label': 'Name of the ' + box.colours[seat] + ' player', autocomplete: 'off' });
      input.addEventListener('change', function () { count.names[seat] = input.value; changed(); });
      list.appendChild(el('div', { class: 'player-row' }, [
        el('span', { class: 'swatch', 'data-colour': box.colours[seat] }), input]));
    });
  }

  function renderAdd() {
    var row = clear(byId('add-island'));
    row.appendChild(el('span', { class: 'hint', text: 'Add an island worth:' }));
    Object.keys(box.values).map(Number).filter(function (v) { return v > 0; }).forEach(function (value) {
      row.appendChild(el('button', { type: 'button', class: 'add', 'data-value': value, disabled: left(value) <= 0,
        'aria-label': 'Add an island worth ' + value + ' points',
        onclick: function () { count.islands.push({ value: value, boats: {}, royal: null }); changed(); } },
      [String(value), el('small', { text: left(value) + ' left' })]));
    });
  }

  function islandTitle(island) {
    return island.value === 0 ? box.start : 'Island worth ' + island.value;
  }

  function renderIsland(island, index) {
    var royal = island.royal !== null;
    var card = el('div', { class: 'island' + (royal ? ' royal-island' : ''), 'data-index': index, 'data-value': island.value });
    var head = el('div', { class: 'island-head' }, [el('h3', { text: islandTitle(island)
      + (royal ? ' · royal island of ' + nameOf(island.royal) : '') })]);
    if (host && island.value !== 0) {
      head.appendChild(el('button', { type: 'button', class: 'quiet small remove', 'aria-label': 'Remove this island',
        text: 'Remove', onclick: function () { count.islands.splice(index, 1); changed(); } }));
    }
    card.appendChild(head);
    if (!royal) {
      var grid = el('div', { class: 'boats-grid' });
      count.names.forEach(function (name, seat) {
        var n = island.boats[seat] || 0;
        if (!host) {
          if (n) grid.appendChild(el('div', { class: 'stepper' }, [el('span', { class: 'who' }, [
            el('span', { class: 'swatch', 'data-colour': box.colours[seat] }), nameOf(seat) + ': ' + n + (n === 1 ? ' boat' : ' boats')])]));
          return;
        }
        grid.appendChild(stepper(nameOf(seat), n,
          n > 0 ? function () { island.boats[seat] = n - 1; changed(); } : null,
          onMap(seat) < box.boats ? function () { island.boats[seat] = n + 1; changed(); } : null,
          { seat: seat, colour: box.colours[seat], what: 'boat' }));
      });
      if (!host && !grid.firstChild) grid.appendChild(el('span', { class: 'hint', text: 'No boats.' }));
      card.appendChild(grid);
    }
    if (host && island.value !== 0) {
      var chips = el('div', { class: 'royal-row' }, [el('span', { text: 'Royal island of:' })]);
      chips.appendChild(el('button', { type: 'button', class: 'royal-none', 'aria-pressed': String(!royal), text: 'nobody',
        onclick: function () { island.royal = null; changed(); } }));
      count.names.forEach(function (name, seat) {
        var mine = island.royal === seat;
        chips.appendChild(el('button', { type: 'button', class: 'royal-of', 'data-seat': seat, 'aria-pressed': String(mine),
          disabled: !mine && royals(seat) >= box.royal,
          onclick: function () { island.royal = seat; island.boats = {}; changed(); } },
        [el('span', { class: 'swatch', 'data-colour': box.colours[seat] }), nameOf(seat)]));
      });
      card.appendChild(chips);
    }
    return card;
  }

  function render() {
    byId('guest-note').hidden = host;
    byId('players-card').hidden = !host;
    byId('add-island').hidden = !host;
    byId('count-again').hidden = !host;
    if (host) { renderPlayers(); renderAdd(); }
    var list = clear(byId('islands'));
    count.islands.forEach(function (island, index) { list.appendChild(renderIsland(island, index)); });
    if (!count.islands.length) list.appendChild(el('p', { class: 'hint', text: 'No island counted yet.' }));
    var islands = count.islands.filter(function (i) { return i.value > 0; }).length;
    byId('islands-facts').textContent = islands + (islands === 1 ? ' island' : ' islands') + ' besides ' + box.start;
    paintSwatches(document);
  }

  // ------------------------------------------------------------------ following the count

  function poll() {
    fetch('/api/games/tongiaki/count?since=' + encodeURIComponent(current.version), { cache: 'no-store', credentials: 'same-origin' })
      .then(function (response) { return response.json(); })
      .then(function (state) {
        common.setLive('live');
        if (state.unchanged) return;
        current = state; box = state.box; host = state.you.host; csrf = state.you.csrf || csrf;
        startCount();
        render();
        showScore(null);
      }, function () { common.setLive('offline'); });
  }

  byId('players-minus').addEventListener('click', function () {
    if (count.names.length <= box.min_players) return;
    var seat = count.names.length - 1;
    count.names.pop();
    count.islands.forEach(function (i) { delete i.boats[seat]; if (i.royal === seat) i.royal = null; });
    changed();
  });
  byId('count-again').addEventListener('click', function () {
    if (!window.confirm('Start the count again? Every island entered goes.')) return;
    count.islands = [{ value: 0, boats: {}, royal: null }];
    changed();
  });
  byId('players-plus').addEventListener('click', function () {
    if (count.names.length < box.max_players) { count.names.push(''); changed(); }
  });

  startCount();
  render();
  showScore(null);
  common.setLive('live');
  if (!host) setInterval(poll, POLL_MS);
})();
