/* The host's screens: PIN login, new game, entering a turn by taps, questions, corrections,
 * undo, teaching a box. Every change is a POST with the session's CSRF token in X-CSRF-Token. */
(function () {
  'use strict';

  var C = window.Companion;
  var el = C.el, clear = C.clear, plural = C.plural;
  var meta = document.querySelector('meta[name="csrf-token"]');
  var csrf = meta ? meta.getAttribute('content') : '';
  var builder = fresh();
  var shownSetup = false;
  var lastTurn = null;

  function byId(id) { return document.getElementById(id); }
  function fresh() {
    return { slot: null, position: null, action: null, cell: null, rotation: 0, drawn: '',
      shipTo: '', preview: null, error: null, busy: false, seq: 0 };
  }

  // ------------------------------------------------------------------ API

  function post(url, body) { return window.CompanionCommon.post(url, body, csrf); }

  function act(url, body, okMessage) {
    return post(url, body).then(function (data) {
      if (okMessage !== false) C.toast(okMessage || (data.text && C.tileWords(data.text)) || 'Done.', 'ok');
      return C.refresh().then(function () { return data; });
    }).catch(function (error) {
      C.toast(error.message, 'error');
      if (error.status === 401) C.refresh();
      throw error;
    });
  }

  C.api.confirm = function (index) {
    act('/api/confirm', { index: index }).then(resetBuilder, function () {});
  };
  C.api.dismiss = function () {
    act('/api/dismiss', {}, 'Question dropped.').catch(function () {});
  };
  C.api.resumeSaved = function () {
    act('/api/resume', {}, 'Resumed at the last good turn.').then(resetBuilder, function () {});
  };
  C.api.newGame = function () {
    var panel = byId('newgame-panel');
    if (panel.hidden) {
      panel.hidden = false;
      fillNewGame();
    }
    panel.scrollIntoView({ behavior: 'smooth', block: 'start' });
  };

  // ------------------------------------------------------------------ login

  byId('login-form').addEventListener('submit', function (event) {
    event.preventDefault();
    var input = byId('pin');
    post('/api/login', { pin: input.value }).then(function (data) {
      csrf = data.csrf;
      input.value = '';
      C.toast('You are the host now.', 'ok');
      return C.refresh();
    }).catch(function (error) {
      input.select();
      C.toast(error.message, 'error');
    });
  });

  byId('btn-logout').addEventListener('click', function () {
    act('/api/logout', {}, 'Logged out.').catch(function () {});
  });
  byId('btn-undo').addEventListener('click', function () {
    act('/api/undo', {}).then(resetBuilder, function () {});
  });

  Array.prototype.forEach.call(document.querySelectorAll('[data-toggle]'), function (button) {
    button.addEventListener('click', function () {
      var panel = byId(button.getAttribute('data-toggle'));
      var open = panel.hidden;
      Array.prototype.forEach.call(document.querySelectorAll('.host-tools .panel'), function (p) {
        p.hidden = true;
      });
      panel.hidden = !open;
      if (open) {
        if (panel.id === 'newgame-panel') fillNewGame();
        if (panel.id === 'correct-panel') fillCorrect();
        panel.scrollIntoView({ behavior: 'smooth', block: 'start' });
      }
    });
  });

  // ------------------------------------------------------------------ the turn builder

  function playing(state) {
    return state.you && state.you.host && state.game && !state.game.over && state.phase !== 'setup';
  }
  function sameCell(a, b) { return !!a && !!b && a[0] === b[0] && a[1] === b[1]; }
  function resetBuilder() { builder = fresh(); C.ui.selectedSlot = null; C.render(); }

  C.hooks.displayTap = function (slot) {
    var state = C.state();
    if (!playing(state)) return true;
    var options = C.reachOf(state).bySlot[slot[0] + ',' + slot[1]];
    if (!options) {
      builder = fresh();
      return true;  // the page still explains why it cannot be taken
    }
    var keep = builder.slot && sameCell(builder.slot, slot);
    if (!keep) {
      builder = fresh();
      builder.slot = slot;
      builder.position = options[0].position;
    }
    C.ui.selectedSlot = slot;
    C.render();
    return false;
  };

  C.hooks.laneTap = function (position) {
    var state = C.state();
    if (!playing(state)) return;
    var reach = C.reachOf(state);
    if (!reach.byPosition[position]) {
      C.toast(C.mover(state).name + ' cannot move the ship that far.', 'error');
      return;
    }
    if (builder.slot) {
      var options = reach.bySlot[builder.slot[0] + ',' + builder.slot[1]] || [];
      if (options.some(function (o) { return o.position === position; })) {
        builder.position = position;
        requestPreview();
        return;
      }
    }
    builder = fresh();
    builder.position = position;
    C.ui.selectedSlot = null;
    C.render();
  };

  C.hooks.boardTap = function (index, cell) {
    var state = C.state();
    if (!playing(state) || index !== state.game.to_move || !builder.action) return;
    var placed = state.game.players[index].board[cell[0]][cell[1]];
    var wantsEmpty = builder.action === 'board' || builder.action === 'stored';
    if (builder.action === 'discard' && placed) { builder.cell = cell; requestPreview(); }
    else if (wantsEmpty && !placed) { builder.cell = cell; builder.rotation = 0; requestPreview(); }
  };

  C.hooks.storageTap = function (index) {
    var state = C.state();
    if (!playing(state) || index !== state.game.to_move) return;
    if (state.game.players[index].storage && builder.position !== null && !builder.slot) {
      choose('stored');
    }
  };

  C.hooks.slotClass = function (slot) { return sameCell(builder.slot, slot) ? 'picked' : ''; };
  C.hooks.laneClass = function (p) { return builder.position === p ? 'picked' : ''; };
  C.hooks.boardCellClass = function (index, cell, placed) {
    var state = C.state();
    if (!playing(state) || index !== state.game.to_move || !builder.action) return '';
    if (sameCell(builder.cell, cell)) return 'picked';
    var wantsEmpty = builder.action === 'board' || builder.action === 'stored';
    if ((wantsEmpty && !placed) || (builder.action === 'discard' && placed && typeof placed === 'object')) {
      return 'target';
    }
    return '';
  };
  C.hooks.boardGhost = function (index, cell) {
    var state = C.state();
    if (!playing(state) || index !== state.game.to_move || !sameCell(builder.cell, cell)) return null;
    var game = state.game;
    var tile = builder.action === 'board' ? game.display[builder.slot[0]][builder.slot[1]]
      : builder.action === 'stored' ? game.players[index].storage : null;
    return tile ? { tile: tile, rotation: builder.rotation } : null;
  };
  C.hooks.storageClass = function (index) {
    var state = C.state();
    return playing(state) && index === state.game.to_move && builder.action === 'stored' ? 'picked' : '';
  };

  function choose(action) {
    builder.action = action;
    builder.cell = null;
    builder.preview = null;
    builder.error = null;
    if (action === 'storage' || action === 'pass') requestPreview();
    else {
      C.render();
      var board = document.querySelector('.player.to-move');
      if (board) board.scrollIntoView({ behavior: 'smooth', block: 'start' });
    }
  }

  function turnJson() {
    var state = C.state();
    var reachEntry = C.reachOf(state).byPosition[builder.position];
    var turn = { steps: reachEntry.steps };
    var a = builder.action;
    if (a === 'board') turn.action = { type: 'take_to_board', slot: builder.slot, cell: builder.cell, rotation: builder.rotation };
    else if (a === 'storage') turn.action = { type: 'take_to_storage', slot: builder.slot };
    else if (a === 'stored') turn.action = { type: 'storage_to_board', cell: builder.cell, rotation: builder.rotation };
    else if (a === 'discard') turn.action = { type: 'discard', cell: builder.cell };
    else turn.action = { type: 'pass' };
    if (state.game.variant !== 'base' && (a === 'board' || a === 'stored')) turn.ship_path = 'auto';
    if (builder.drawn && (a === 'board' || a === 'storage')) turn.drawn = builder.drawn;
    if (builder.shipTo && state.game.variant === 'advanced') {
      turn.ship_to = builder.shipTo.split(',').map(Number);
    }
    return turn;
  }

  function requestPreview() {
    builder.seq += 1;
    var seq = builder.seq;
    builder.preview = null;
    builder.error = null;
    C.render();
    post('/api/preview', turnJson()).then(function (data) {
      if (seq !== builder.seq) return;
      builder.preview = data;
      var action = data.turn && data.turn.action;
      if (action && typeof action.rotation === 'number') builder.rotation = action.rotation;
      C.render();
    }).catch(function (error) {
      if (seq !== builder.seq) return;
      builder.error = error.message;
      C.render();
    });
  }

  function confirmTurn() {
    builder.busy = true;
    renderBuilder(C.state());
    act('/api/turn', turnJson()).then(function () {
      resetBuilder();
      document.getElementById('display').scrollIntoView({ behavior: 'smooth', block: 'center' });
    }, function () {
      builder.busy = false;
      renderBuilder(C.state());
    });
  }

  function step(n, text) { return el('p', { class: 'step' }, [el('b', { text: n }), text]); }

  function renderBuilder(state) {
    var box = byId('builder');
    clear(box);
    box.hidden = !playing(state) || state.phase === 'confirm';
    var active = !box.hidden && builder.position !== null;
    box.classList.toggle('sheet', active);
    document.body.classList.toggle('sheet-open', active);
    if (box.hidden) return;
    var who = C.mover(state);
    var game = state.game;
    var reach = C.reachOf(state);
    var tiles = state.tiles;
    var player = game.players[game.to_move];
    var title = el('h3', {}, ['Enter ', el('span', { class: 'who', text: who.name + '’s' }), ' turn']);
    if (!active) {
      box.appendChild(title);
      box.appendChild(step('1', ' Tap the tile ' + who.name + ' took in the display — or a spot in the '
        + 'ship’s lane to pass, lay the stored tile or remove a tile.'));
      return;
    }
    box.appendChild(el('div', { class: 'sheet-head' }, [title,
      el('button', { type: 'button', class: 'quiet small', 'aria-label': 'Cancel this turn', text: '✕ Cancel',
        onclick: resetBuilder })]));
    var entry = reach.byPosition[builder.position];
    var shipText = plural(entry.steps, 'step') + ' to ' + C.positionName(builder.position);
    if (builder.slot) {
      var id = game.display[builder.slot[0]][builder.slot[1]];
      var options = reach.bySlot[builder.slot[0] + ',' + builder.slot[1]] || [];
      box.appendChild(el('div', { class: 'picked-tile' }, [
        C.tileSvg(tiles[id], 0, { class: 'tile-svg thumb' }),
        el('div', {}, [el('strong', { text: C.describeMeaning(tiles[id]) }),
          el('div', { class: 'hint', text: 'display ' + C.cellName(builder.slot)
            + (options.length > 1 ? '' : ' · ship ' + shipText) })])
      ]));
      if (options.length > 1) {
        var choices = el('div', { class: 'options', role: 'group', 'aria-label': 'Where the ship stops' },
          [el('span', { class: 'options-label', text: 'Ship:' })]);
        options.forEach(function (o) {
          var on = o.position === builder.position;
          choices.appendChild(el('button', { type: 'button', class: 'option' + (on ? ' on' : ''),
            'aria-pressed': on ? 'true' : 'false', title: C.positionName(o.position),
            text: plural(o.steps, 'step') + ' · ' + (o.cost ? plural(o.cost, 'shell') : 'free'),
            onclick: function () { C.hooks.laneTap(o.position); } }));
        });
        box.appendChild(choices);
      }
    } else {
      box.appendChild(el('p', { class: 'ship-line' }, ['Ship: ', el('strong', { text: shipText }),
        entry.move_cost ? ' (' + plural(entry.move_cost, 'shell') + ')' : ' (free)']));
    }
    // The action.
    var hasTiles = player.board.some(function (row) {
      return row.some(function (c) { return c && typeof c === 'object'; });
    });
    var buttons = [];
    function actionButton(action, label, enabled) {
      var on = builder.action === action;
      buttons.push(el('button', { type: 'button', class: 'option' + (on ? ' on' : ''), disabled: !enabled,
        'aria-pressed': on ? 'true' : 'false', 'data-action': action, text: label,
        onclick: function () { choose(action); } }));
    }
    if (builder.slot) {
      actionButton('board', 'Lay on the board', true);
      actionButton('storage', 'Into storage', !player.storage);
    } else {
      actionButton('pass', 'Pass', true);
      actionButton('stored', 'Lay the stored tile', !!player.storage);
      actionButton('discard', 'Remove a tile', hasTiles);
    }
    box.appendChild(el('div', { class: 'options' }, buttons));
    var a = builder.action;
    if ((a === 'board' || a === 'stored' || a === 'discard') && !builder.cell) {
      box.appendChild(step('2', a === 'discard' ? ' Tap the tile to remove on ' + who.name + '’s board.'
        : ' Tap an empty field on ' + who.name + '’s board (dashed).'));
    }
    if ((a === 'board' || a === 'stored') && builder.cell && builder.preview && builder.preview.rotations.length) {
      var tileId = a === 'board' ? game.display[builder.slot[0]][builder.slot[1]] : player.storage;
      var single = builder.preview.rotations.length === 1;
      var turns = el('div', { class: 'rotations', role: 'group', 'aria-label': 'How the tile lies' },
        [el('span', { class: 'options-label', text: single ? 'Palms point to the owner:' : 'Turned:' })]);
      builder.preview.rotations.forEach(function (rotation) {
        var on = rotation === builder.rotation;
        turns.appendChild(el('button', { type: 'button', class: 'rotation' + (on ? ' on' : ''),
          'aria-pressed': on ? 'true' : 'false', 'data-rotation': rotation, title: 'turned ' + rotation + '°',
          onclick: function () { builder.rotation = rotation; requestPreview(); } },
          [C.tileSvg(tiles[tileId], rotation, { class: 'tile-svg mini' }), el('span', { text: rotation + '°' })]));
      });
      box.appendChild(turns);
    }
    // Rarely needed: the tile that refilled the display, the player ship afterwards.
    var extras = [];
    if ((a === 'board' || a === 'storage') && game.stack_left > 0) {
      var drawn = el('select', { id: 'b-drawn', onchange: function (e) { builder.drawn = e.target.value; requestPreview(); } },
        [el('option', { value: '', text: 'the companion draws one' })]);
      Object.keys(tiles).forEach(function (tileKey) {
        drawn.appendChild(el('option', { value: tileKey, selected: builder.drawn === tileKey,
          text: tileKey + ' — ' + C.describeMeaning(tiles[tileKey]) }));
      });
      extras.push(el('label', { class: 'extra' }, ['Tile drawn to refill the display', drawn]));
    }
    if (game.variant === 'advanced' && a && a !== 'pass') {
      var shipTo = el('select', { id: 'b-shipto', onchange: function (e) { builder.shipTo = e.target.value; requestPreview(); } },
        [el('option', { value: '', text: 'stays where it is' })]);
      player.board.forEach(function (row, r) {
        row.forEach(function (c, col) {
          if ((c && typeof c === 'object') || sameCell(builder.cell, [r, col])) {
            shipTo.appendChild(el('option', { value: r + ',' + col, selected: builder.shipTo === r + ',' + col,
              text: C.cellName([r, col]) }));
          }
        });
      });
      extras.push(el('label', { class: 'extra' }, [who.name + '’s ship afterwards', shipTo]));
    }
    if (extras.length) {
      var details = el('details', { class: 'more', open: !!(builder.drawn || builder.shipTo) },
        [el('summary', { text: game.variant === 'advanced' ? 'Drawn tile, player ship' : 'Drawn tile' })].concat(extras));
      box.appendChild(details);
    }
    // The verdict before confirming.
    if (builder.error) box.appendChild(el('p', { class: 'preview bad', role: 'alert', text: builder.error }));
    if (builder.preview) {
      var p = builder.preview;
      var cost = p.cost ? 'Costs ' + plural(p.cost, 'shell') : 'Free';
      if (p.gained) cost += ', gains ' + plural(p.gained, 'shell');
      box.appendChild(el('div', { class: 'preview good' }, [
        el('strong', { text: cost + '. ' }), el('span', { text: C.tileWords(p.text) + '.' })
      ]));
    }
    var ready = builder.preview && !builder.error && !builder.busy;
    box.appendChild(el('div', { class: 'actions' }, [
      el('button', { type: 'button', class: 'primary', id: 'b-confirm', disabled: !ready,
        text: builder.busy ? 'Saving…' : 'Confirm the turn', onclick: confirmTurn })
    ]));
  }

  // ------------------------------------------------------------------ new game

  function playerRow(player, index) {
    var colours = Object.keys(C.state().web.colours);
    var seat = el('select', { class: 'ng-seat', 'aria-label': 'Seat' });
    for (var s = 1; s <= 5; s++) seat.appendChild(el('option', { value: s, selected: s === player.seat, text: 'seat ' + s }));
    var colour = el('select', { class: 'ng-colour', 'aria-label': 'Colour' });
    colours.forEach(function (c) { colour.appendChild(el('option', { value: c, selected: c === player.colour, text: c })); });
    return el('div', { class: 'ng-player' }, [
      el('input', { class: 'ng-name', type: 'text', maxlength: 24, required: true, value: player.name,
        placeholder: 'Player ' + (index + 1), 'aria-label': 'Name of player ' + (index + 1), oninput: updateStartOptions }),
      seat, colour,
      el('button', { type: 'button', class: 'quiet small', text: '✕', 'aria-label': 'Remove this player',
        onclick: function (e) { e.target.closest('.ng-player').remove(); updateStartOptions(); } })
    ]);
  }

  function fillNewGame() {
    var state = C.state();
    var box = clear(byId('ng-players'));
    var colours = Object.keys(state.web.colours);
    var players = state.game ? state.game.players.map(function (p) {
      return { name: p.name, seat: p.seat, colour: p.colour };
    }) : [{ name: '', seat: 1, colour: colours[0] }, { name: '', seat: 2, colour: colours[1] }];
    players.forEach(function (p, i) { box.appendChild(playerRow(p, i)); });
    var ship = clear(byId('ng-ship'));
    for (var p = 0; p < 16; p++) ship.appendChild(el('option', { value: p, text: C.positionName(p) }));
    if (state.game) {
      byId('ng-variant').value = state.game.variant;
      byId('ng-side').value = state.game.side;
      byId('ng-matching').value = state.game.matching;
    }
    var camera = byId('ng-camera');
    camera.checked = !!state.web.camera_read;
    camera.disabled = !state.web.camera_read;
    byId('ng-camera-hint').hidden = !!state.web.camera_read;
    updateStartOptions();
  }

  function updateStartOptions() {
    var select = byId('ng-start');
    var before = select.value;
    clear(select);
    Array.prototype.forEach.call(document.querySelectorAll('#ng-players .ng-name'), function (input, i) {
      select.appendChild(el('option', { value: i, text: input.value || 'Player ' + (i + 1) }));
    });
    // Until the host picks one, the start player is the last: the first listed begins.
    if (select.dataset.touched && before && before < select.options.length) select.value = before;
    else if (select.options.length) select.value = String(select.options.length - 1);
  }

  byId('ng-start').addEventListener('change', function (e) { e.target.dataset.touched = '1'; });

  byId('ng-add').addEventListener('click', function () {
    var rows = document.querySelectorAll('#ng-players .ng-player');
    if (rows.length >= 5) { C.toast('Māori is played by at most 5 players.', 'error'); return; }
    var used = Array.prototype.map.call(document.querySelectorAll('.ng-seat'), function (s) { return Number(s.value); });
    var usedColours = Array.prototype.map.call(document.querySelectorAll('.ng-colour'), function (s) { return s.value; });
    var seat = [1, 2, 3, 4, 5].filter(function (s) { return used.indexOf(s) < 0; })[0] || 1;
    var colour = Object.keys(C.state().web.colours).filter(function (c) { return usedColours.indexOf(c) < 0; })[0];
    byId('ng-players').appendChild(playerRow({ name: '', seat: seat, colour: colour }, rows.length));
    updateStartOptions();
  });

  byId('newgame-panel').addEventListener('submit', function (event) {
    event.preventDefault();
    var players = Array.prototype.map.call(document.querySelectorAll('#ng-players .ng-player'), function (row) {
      return {
        name: row.querySelector('.ng-name').value,
        seat: Number(row.querySelector('.ng-seat').value),
        colour: row.querySelector('.ng-colour').value
      };
    });
    act('/api/game', {
      players: players,
      start_player: Number(byId('ng-start').value),
      ship: Number(byId('ng-ship').value),
      variant: byId('ng-variant').value,
      side: byId('ng-side').value,
      matching: byId('ng-matching').value,
      use_camera: byId('ng-camera').checked
    }, 'New game started.').then(function () {
      byId('newgame-panel').hidden = true;
      resetBuilder();
      window.scrollTo({ top: 0, behavior: 'smooth' });
    }, function () {});
  });

  // ------------------------------------------------------------------ corrections

  function fillCorrect() {
    var state = C.state();
    var area = byId('cc-area');
    var before = area.value;
    clear(area);
    area.appendChild(el('option', { value: 'display', text: 'the display' }));
    (state.game ? state.game.players : []).forEach(function (p) {
      area.appendChild(el('option', { value: String(p.seat), text: p.name + '’s board (seat ' + p.seat + ')' }));
    });
    if (before) area.value = before;
    fillRowsCols();
    var tile = byId('cc-tile');
    if (!tile.options.length) {
      tile.appendChild(el('option', { value: ':empty', text: 'nothing (empty)' }));
      tile.appendChild(el('option', { value: ':unknown', text: 'cannot tell (unknown)' }));
      Object.keys(state.tiles).forEach(function (id) {
        tile.appendChild(el('option', { value: id, text: id + ' — ' + C.describeMeaning(state.tiles[id]) }));
      });
    }
    drawCorrectPreview();
  }

  function fillRowsCols() {
    var state = C.state();
    var rows = 4, cols = 4;
    if (byId('cc-area').value !== 'display' && state.game) {
      rows = state.game.layout.rows;
      cols = state.game.layout.cols;
    }
    [['cc-row', rows], ['cc-col', cols]].forEach(function (pair) {
      var select = byId(pair[0]);
      var before = select.value;
      clear(select);
      for (var i = 0; i < pair[1]; i++) select.appendChild(el('option', { value: i, text: String(i + 1) }));
      if (before && Number(before) < pair[1]) select.value = before;
    });
  }

  function drawCorrectPreview() {
    var box = clear(byId('cc-preview'));
    var id = byId('cc-tile').value;
    if (id && id.charAt(0) !== ':') {
      box.appendChild(C.tileSvg(C.state().tiles[id], Number(byId('cc-rotation').value), { class: 'tile-svg thumb' }));
    }
  }

  byId('cc-area').addEventListener('change', fillRowsCols);
  byId('cc-tile').addEventListener('change', drawCorrectPreview);
  byId('cc-rotation').addEventListener('change', drawCorrectPreview);
  byId('correct-panel').addEventListener('submit', function (event) {
    event.preventDefault();
    var area = byId('cc-area').value;
    var tile = byId('cc-tile').value;
    var cell = tile === ':empty' ? { empty: true } : tile === ':unknown' ? { unknown: true }
      : { tile: tile, rotation: Number(byId('cc-rotation').value) };
    post('/api/correct', {
      area: area === 'display' ? 'display' : Number(area),
      row: Number(byId('cc-row').value),
      col: Number(byId('cc-col').value),
      cell: cell
    }).then(function (data) {
      C.toast(data.verdict === 'accepted' ? 'Corrected: the turn is recorded.'
        : 'Corrected. ' + (data.reason || ''), data.verdict === 'accepted' ? 'ok' : 'error');
      return C.refresh();
    }).catch(function (error) { C.toast(error.message, 'error'); });
  });

  // ------------------------------------------------------------------ teach a box

  // asked / shown: the number of the last state asked for and of the one shown (answers
  // may come back out of order: an older one must not undo a newer).
  var teach = { state: null, open: false, busy: false, loaded: false, asked: 0, shown: 0 };
  var ROTATIONS = [0, 90, 180, 270];

  function teachLoad() {
    var number = ++teach.asked;
    return fetch('/api/teach/state', { credentials: 'same-origin', cache: 'no-store' })
      .then(function (response) {
        return response.json().then(function (data) {
          if (!response.ok) throw new Error(data.error || 'The teach state could not be read.');
          return data;
        });
      }).then(function (data) {
        if (number < teach.shown) return;
        teach.shown = number;
        teach.state = data;
        teach.loaded = true;
        if (data.active && !teach.open) setTeachOpen(true);
        renderTeach();
      }).catch(function (error) { C.toast(error.message, 'error'); });
  }

  function teachAct(action, body) {
    teach.busy = true;
    renderTeach();
    return post('/api/teach/' + action, body).then(function (data) {
      if (data.text) C.toast(C.tileWords(data.text), 'ok');
    }).catch(function (error) {
      C.toast(error.message, 'error');
      if (error.status === 401) C.refresh();
    }).then(function () {
      teach.busy = false;
      return teachLoad();
    });
  }

  function setTeachOpen(open) {
    teach.open = open;
    byId('teach-body').hidden = !open;
    var toggle = byId('teach-toggle');
    toggle.textContent = open ? 'Close' : 'Open';
    toggle.setAttribute('aria-expanded', open ? 'true' : 'false');
  }

  function typeSelect(types, chosen, label) {
    var select = el('select', { class: 'teach-type', 'aria-label': label },
      [el('option', { value: '', text: '— nothing here —' })]);
    types.forEach(function (t) {
      select.appendChild(el('option', { value: t.tile_id, selected: t.tile_id === chosen,
        text: t.tile_id + ' — ' + t.description }));
    });
    return select;
  }

  function teachCell(cell, types) {
    var suggestion = cell.suggestion;
    var rotation = el('select', { class: 'teach-rotation', 'aria-label': cell.name + ' turned' });
    ROTATIONS.forEach(function (r) {
      rotation.appendChild(el('option', { value: r, selected: !!suggestion && suggestion.rotation === r,
        text: r ? 'turned ' + r + '°' : 'upright' }));
    });
    var note = !cell.occupied ? 'looks empty' : !cell.found ? 'edges unclear' : '';
    return el('div', { class: 'teach-cell' + (cell.occupied ? '' : ' empty') + (cell.occupied && !cell.found ? ' unclear' : ''),
      'data-cell': cell.cell }, [
      el('img', { src: cell.crop, alt: 'what lies on ' + cell.name, width: 128, height: 128 }),
      el('span', {}, [el('span', { class: 'name', text: cell.name }), note ? ' · ' + note : '']),
      typeSelect(types, suggestion ? suggestion.tile_id : '', 'tile type on ' + cell.name),
      rotation
    ]);
  }

  function renderTeachView(s) {
    var box = clear(byId('teach-view'));
    var view = s.view;
    if (!view) return;
    if (view.kind !== 'tiles') {
      var what = view.kind === 'ship' ? 'The explorer ship as seen'
        : 'The empty ' + view.side + ' board beside seat ' + view.seat;
      box.appendChild(el('p', { class: 'hint', text: what + '. Keep it, or take another picture.' }));
      box.appendChild(el('img', { class: 'teach-picture', src: view.picture, alt: what }));
      return;
    }
    var shown = el('div', { class: 'teach-grid' });
    var others = el('div', { class: 'teach-grid' });
    view.cells.forEach(function (cell) {
      (cell.occupied || cell.suggestion ? shown : others).appendChild(teachCell(cell, s.types));
    });
    box.appendChild(el('p', { class: 'hint', text: 'Check each cell’s type and how it lies; '
      + 'pick “nothing here” to leave a cell out.' }));
    box.appendChild(shown);
    if (others.childNodes.length) {
      box.appendChild(el('details', { class: 'more' },
        [el('summary', { text: 'Cells that look empty (' + others.childNodes.length + ')' }), others]));
    }
  }

  function renderTeach() {
    var s = teach.state;
    if (!s) return;
    byId('teach-unavailable').hidden = s.available;
    if (s.unavailable) byId('teach-unavailable').textContent = s.unavailable;
    byId('teach-start').hidden = !s.available || s.active;
    byId('teach-run').hidden = !s.active;
    Array.prototype.forEach.call(document.querySelectorAll('#teach button'), function (b) {
      if (b.id !== 'teach-toggle') b.disabled = teach.busy;
    });
    if (!s.active) return;
    var step = s.step;
    var done = step.kind === 'done';
    byId('teach-progress').textContent = s.progress;
    byId('teach-instructions').textContent = step.instructions;
    var plan = clear(byId('teach-plan'));
    if (!s.view) {
      step.plan.forEach(function (p) {
        plan.appendChild(el('li', { text: p.name + ': ' + p.tile_id + ' — ' + p.description }));
      });
    }
    var warnings = clear(byId('teach-warnings'));
    ((s.view && s.view.warnings) || []).forEach(function (w) { warnings.appendChild(el('li', { text: w })); });
    renderTeachView(s);
    var look = byId('teach-look');
    look.hidden = done;
    look.textContent = teach.busy ? 'Working…' : s.view ? 'Take another picture' : 'Take picture';
    look.classList.toggle('primary', !s.view);
    byId('teach-accept').hidden = !s.view;
    var skip = byId('teach-skip');
    skip.hidden = !step.can_skip;
    skip.textContent = step.kind === 'tiles' ? 'No more tiles' : 'Skip this side';
    byId('teach-finish').hidden = !done;
    byId('teach-finish-hint').hidden = !done;
  }

  byId('teach-toggle').addEventListener('click', function () {
    setTeachOpen(!teach.open);
    if (teach.open) teachLoad();
  });
  byId('teach-start').addEventListener('submit', function (event) {
    event.preventDefault();
    teachAct('start', { name: byId('teach-name').value, batch: Number(byId('teach-batch').value),
      atoll: byId('teach-atoll').checked });
  });
  byId('teach-look').addEventListener('click', function () { teachAct('look', {}); });
  byId('teach-skip').addEventListener('click', function () { teachAct('skip', {}); });
  byId('teach-accept').addEventListener('click', function () {
    var answers = Array.prototype.map.call(document.querySelectorAll('#teach-view .teach-cell'), function (node) {
      return { cell: Number(node.getAttribute('data-cell')),
        tile_id: node.querySelector('.teach-type').value || null,
        rotation: Number(node.querySelector('.teach-rotation').value) };
    });
    teachAct('accept', { answers: answers });
  });
  byId('teach-finish').addEventListener('submit', function (event) {
    event.preventDefault();
    teachAct('finish', { out: byId('teach-out').value.trim() });
  });
  byId('teach-cancel').addEventListener('click', function () {
    if (window.confirm('Cancel teaching? Nothing taught so far is kept.')) teachAct('cancel', {});
  });

  byId('camera-settle').addEventListener('click', function () {
    act('/api/camera/settle', {}).catch(function () {});
  });

  // ------------------------------------------------------------------ after each render

  C.hooks.afterRender.push(function (state) {
    var host = !!(state.you && state.you.host);
    if (host && state.you.csrf) csrf = state.you.csrf;
    byId('login').hidden = host;
    byId('host-tools').hidden = !host;
    byId('teach').hidden = !host;
    var setting = state.web && state.web.camera_setting;
    byId('camera-setting').hidden = !host || !setting;
    if (setting) byId('camera-setting-text').textContent = setting;
    if (host && !teach.loaded) { teach.loaded = true; teachLoad(); }
    if (!host) { teach.loaded = false; teach.state = null; setTeachOpen(false); }
    byId('btn-undo').disabled = !(state.game && state.game.can_undo);
    if (host && !state.game && !shownSetup) {
      shownSetup = true;
      byId('newgame-panel').hidden = false;
      fillNewGame();
    }
    var turn = state.game ? state.game.turn_number + ':' + state.game.to_move : null;
    if (turn !== lastTurn) {
      lastTurn = turn;
      if (builder.position !== null) {  // the game moved on under the builder: start afresh
        builder = fresh();
        C.ui.selectedSlot = null;
        C.render();
        return;
      }
    }
    renderBuilder(state);
  });

  C.render();
})();
