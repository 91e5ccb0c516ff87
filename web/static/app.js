/* The live table: draws the whole game from /api/state and follows it over /events.
 * Vanilla JS, no framework, nothing from the internet. Every tile is drawn from its meaning
 * (kind, land edges, symbols), never from a pack's art. host.js adds the host's screens
 * through the hooks at the bottom. */
(function () {
  'use strict';

  var TILE = 100;        // a tile's own drawing is 100 x 100 units
  var PITCH = 100;       // display cell pitch in the display drawing
  var GAP = 6;           // gap between display tiles
  var LANE = 60;         // width of the ship's lane around the display
  var LOG_SHORT = 12;    // moves shown before "show all"
  var COLOURS = {
    sea: '#2f7fb8', seaDeep: '#1f5f86', wave: 'rgba(255,255,255,0.45)', beach: '#efd9a0',
    land: '#6fae4e', rock: '#5b4a42', lava: '#e4572e', empty: '#d5e8f4', atoll: '#c4e6d8',
    lane: '#e4f0f7', laneLine: '#b9d3e3'
  };
  var EDGE_VECTOR = { N: [0, -1], E: [1, 0], S: [0, 1], W: [-1, 0] };
  var SIDE_NAMES = ['north', 'east', 'south', 'west'];
  var KIND_NAMES = {
    water: 'water', single: 'single island', end: 'island end', middle: 'island middle',
    volcano: 'volcano'
  };

  var current = JSON.parse(document.getElementById('initial-state').textContent);
  var ui = { selectedSlot: null, logExpanded: false, lastSnapshotAt: null, snapshotTimer: null };
  var hooks = {
    displayTap: null, laneTap: null, boardTap: null, storageTap: null, boardGhost: null,
    slotClass: null, laneClass: null, boardCellClass: null, storageClass: null,
    afterRender: []
  };

  // ------------------------------------------------------------------ DOM helpers

  var common = window.CompanionCommon;
  var el = common.el, sv = common.sv, clear = common.clear, byId = common.byId;
  var toast = common.toast, setLive = common.setLive;

  function plural(n, word) { return n + ' ' + word + (n === 1 ? '' : 's'); }
  function cellName(cell) { return 'row ' + (cell[0] + 1) + ', column ' + (cell[1] + 1); }
  function positionName(p) {
    var side = Math.floor(p / 4), k = p % 4;
    if (side === 0) return 'north of column ' + (k + 1);
    if (side === 1) return 'east of row ' + (k + 1);
    if (side === 2) return 'south of column ' + (4 - k);
    return 'west of row ' + (4 - k);
  }
  function colourOf(name) {
    var palette = (current.web && current.web.colours) || {};
    if (palette[name]) return palette[name];
    if (/^#[0-9a-fA-F]{6}$/.test(name || '')) return name;
    return '#7a8a96';
  }
  function isLight(hex) {
    var n = parseInt(hex.slice(1), 16);
    return ((n >> 16) * 299 + ((n >> 8) & 255) * 587 + (n & 255) * 114) / 1000 > 170;
  }
  function describeMeaning(m) {
    if (!m) return 'unknown tile';
    var parts = [KIND_NAMES[m.kind] || m.kind];
    if (m.palms) parts.push(plural(m.palms, 'palm'));
    if (m.huts) parts.push(plural(m.huts, 'hut'));
    if (m.shells) parts.push(plural(m.shells, 'shell'));
    if (m.boats) parts.push(plural(m.boats, 'boat'));
    if (m.lei) parts.push('lei');
    return parts.join(' · ');
  }

  // The rules name a tile by its id in a line of the move log ("took end-boat from the
  // display", "display a1 now single-palm1-hut"); the page names it as the tap hint does
  // ("island end · 1 boat"), through describeMeaning, for every tile id of this game.
  var TILE_AFTER = /\b(took|put|stored|removed|now) ([a-z0-9][a-z0-9-]*)(?![A-Za-z0-9-])/g;
  function tileWords(text, tiles) {
    tiles = tiles || (current && current.tiles) || {};
    return String(text).replace(TILE_AFTER, function (all, verb, id) {
      return Object.prototype.hasOwnProperty.call(tiles, id) ? verb + ' ' + describeMeaning(tiles[id]) : all;
    });
  }

  // ------------------------------------------------------------------ glyphs

  function palm(x, y) {
    return sv('g', { class: 'g-palm', transform: 'translate(' + x + ' ' + y + ')' }, [
      sv('path', { d: 'M0 9 Q3 2 1 -5', stroke: '#6b4423', 'stroke-width': 3, fill: 'none',
        'stroke-linecap': 'round' }),
      sv('path', { d: 'M1 -5 Q-6 -10 -10 -3 Q-5 -7 1 -5 Z', fill: '#1d6b2c' }),
      sv('path', { d: 'M1 -5 Q8 -10 11 -2 Q5 -7 1 -5 Z', fill: '#1d6b2c' }),
      sv('path', { d: 'M1 -5 Q-2 -13 4 -13 Q1 -9 1 -5 Z', fill: '#238a37' }),
      sv('circle', { cx: 1, cy: -4, r: 1.8, fill: '#7a4a1c' })
    ]);
  }
  function hut(x, y) {
    return sv('g', { class: 'g-hut', transform: 'translate(' + x + ' ' + y + ')' }, [
      sv('rect', { x: -6.5, y: -1, width: 13, height: 9, fill: '#c8904f' }),
      sv('path', { d: 'M-9 0 L0 -9 L9 0 Z', fill: '#7a4a22' }),
      sv('rect', { x: -2, y: 3, width: 4, height: 5, fill: '#3d2410' })
    ]);
  }
  function shell(x, y) {
    return sv('g', { class: 'g-shell', transform: 'translate(' + x + ' ' + y + ')' }, [
      sv('path', { d: 'M0 7 L-8 -2 A8.5 8.5 0 0 1 8 -2 Z', fill: '#fbe7cf', stroke: '#b9784a',
        'stroke-width': 1.2, 'stroke-linejoin': 'round' }),
      sv('path', { d: 'M0 7 L-4 -6 M0 7 L0 -7 M0 7 L4 -6', stroke: '#b9784a',
        'stroke-width': 1, fill: 'none' })
    ]);
  }
  function boat(x, y, scale) {
    var s = scale || 1;
    return sv('g', { class: 'g-boat', transform: 'translate(' + x + ' ' + y + ') scale(' + s + ')' }, [
      sv('path', { d: 'M-9 2 L9 2 L6 7 L-6 7 Z', fill: '#7a4a22' }),
      sv('path', { d: 'M0 -9 L0 2', stroke: '#3d2410', 'stroke-width': 1.3 }),
      sv('path', { d: 'M1 -8 L8 1 L1 1 Z', fill: '#ffffff', stroke: '#8899a6', 'stroke-width': 0.6 })
    ]);
  }
  function flower(x, y) {
    return sv('g', {}, [
      sv('circle', { cx: x, cy: y, r: 3.8, fill: '#ff4f9a', stroke: '#ffffff', 'stroke-width': 0.9 }),
      sv('circle', { cx: x, cy: y, r: 1.3, fill: '#ffd23f' })
    ]);
  }
  function countLabel(x, y, n) {
    return sv('text', { x: x, y: y, class: 'g-count', 'text-anchor': 'middle',
      'dominant-baseline': 'central', text: '×' + n });
  }

  // ------------------------------------------------------------------ a tile

  function landShapes(m, inset, fill) {
    var shapes = [];
    var half = 24 - inset;
    if (m.kind === 'single') {
      shapes.push(sv('circle', { cx: 50, cy: 50, r: 31 - inset, fill: fill }));
    } else if (m.kind === 'end' || m.kind === 'middle') {
      if (m.kind === 'end') shapes.push(sv('circle', { cx: 50, cy: 50, r: 29 - inset, fill: fill }));
      m.land.split('').forEach(function (edge) {
        var box = {
          N: [50 - half, 0, 2 * half, 50], S: [50 - half, 50, 2 * half, 50],
          E: [50, 50 - half, 50, 2 * half], W: [0, 50 - half, 50, 2 * half]
        }[edge];
        shapes.push(sv('rect', { x: box[0], y: box[1], width: box[2], height: box[3], fill: fill }));
      });
    }
    return shapes;
  }

  function anchorsInLine(n, vertical, cx, cy, spacing) {
    var out = [];
    for (var i = 0; i < n; i++) {
      var offset = (i - (n - 1) / 2) * spacing;
      out.push(vertical ? [cx, cy + offset] : [cx + offset, cy]);
    }
    return out;
  }

  /* The drawing of one tile as it lies (rotation applied), in 0..100 units. */
  function tileArt(m, rotation) {
    var g = sv('g', { class: 'tile-art' });
    g.appendChild(sv('rect', { x: 0, y: 0, width: TILE, height: TILE, rx: 6, fill: COLOURS.sea }));
    var inner = sv('g', rotation ? { transform: 'rotate(' + rotation + ' 50 50)' } : {});
    g.appendChild(inner);
    if (!m) {
      inner.appendChild(sv('text', { x: 50, y: 54, class: 'g-unknown', 'text-anchor': 'middle',
        'dominant-baseline': 'central', text: '?' }));
      return g;
    }
    // A few waves on the open sea.
    [[18, 30], [64, 78]].forEach(function (p) {
      inner.appendChild(sv('path', { d: 'M' + p[0] + ' ' + p[1] + ' q4 -4 8 0 t8 0',
        stroke: COLOURS.wave, 'stroke-width': 2, fill: 'none', 'stroke-linecap': 'round' }));
    });
    if (m.kind === 'volcano') {
      inner.appendChild(sv('circle', { cx: 50, cy: 52, r: 33, fill: COLOURS.beach }));
      inner.appendChild(sv('path', { d: 'M22 74 L42 30 L58 30 L78 74 Z', fill: COLOURS.rock }));
      inner.appendChild(sv('ellipse', { cx: 50, cy: 30, rx: 9, ry: 3.5, fill: COLOURS.lava }));
      inner.appendChild(sv('path', { d: 'M47 31 L44 46 L49 40 L52 55', stroke: COLOURS.lava,
        'stroke-width': 2.4, fill: 'none', 'stroke-linejoin': 'round' }));
    } else {
      landShapes(m, 0, COLOURS.beach).forEach(function (s) { inner.appendChild(s); });
      landShapes(m, 5, COLOURS.land).forEach(function (s) { inner.appendChild(s); });
    }
    // Lei halves: a garland of flowers from the island out to the edge it joins across.
    (m.lei || '').split('').forEach(function (edge) {
      var d = EDGE_VECTOR[edge];
      if (!d) return;
      for (var i = 0; i < 5; i++) {
        var t = i / 4;
        var along = 22 + t * 26;
        var sag = Math.sin(Math.PI * t) * 6;
        inner.appendChild(flower(50 + d[0] * along + d[1] * sag, 50 + d[1] * along - d[0] * sag));
      }
    });
    // Palms and huts on the island, along its length.
    var vertical = /[NS]/.test(m.land || '');
    var onLand = [];
    var i;
    if (m.palms > 4) onLand.push(['palm', m.palms]);
    else for (i = 0; i < m.palms; i++) onLand.push(['palm', 1]);
    for (i = 0; i < Math.min(m.huts, 2); i++) onLand.push(['hut', 1]);
    var landAnchors = anchorsInLine(onLand.length, vertical, 50, 52, m.kind === 'single' ? 19 : 18);
    onLand.forEach(function (item, k) {
      var at = landAnchors[k];
      inner.appendChild(item[0] === 'palm' ? palm(at[0], at[1]) : hut(at[0], at[1]));
      if (item[1] > 1) inner.appendChild(countLabel(at[0] + 11, at[1] + 6, item[1]));
    });
    // Shells and boats on the sea: in the corners, or in a row across a water tile.
    var atSea = [];
    for (i = 0; i < Math.min(m.shells, 4); i++) atSea.push('shell');
    for (i = 0; i < Math.min(m.boats, 4); i++) atSea.push('boat');
    var seaAnchors = (m.kind === 'water' && !m.lei)
      ? anchorsInLine(atSea.length, false, 50, 50, 20)
      : [[15, 15], [85, 85], [85, 15], [15, 85], [50, 12], [50, 88]];
    atSea.forEach(function (what, k) {
      var at = seaAnchors[k % seaAnchors.length];
      inner.appendChild(what === 'shell' ? shell(at[0], at[1]) : boat(at[0], at[1]));
    });
    return g;
  }

  function tileSvg(m, rotation, attrs) {
    var svg = sv('svg', Object.assign({ viewBox: '0 0 100 100', class: 'tile-svg' }, attrs || {}));
    svg.appendChild(tileArt(m, rotation));
    return svg;
  }

  // ------------------------------------------------------------------ reach

  function reachOf(state) {
    var bySlot = {}, byPosition = {};
    var game = state.game;
    if (!game) return { bySlot: bySlot, byPosition: byPosition };
    game.reach.forEach(function (r) {
      byPosition[r.position] = r;
      r.takes.forEach(function (t) {
        var key = t.slot[0] + ',' + t.slot[1];
        (bySlot[key] = bySlot[key] || []).push({
          position: r.position, steps: r.steps, cost: t.cost, tile: t.tile
        });
      });
    });
    Object.keys(bySlot).forEach(function (key) {
      bySlot[key].sort(function (a, b) { return a.cost - b.cost || a.steps - b.steps; });
    });
    return { bySlot: bySlot, byPosition: byPosition };
  }

  function lanePoint(p) {
    var side = Math.floor(p / 4), k = p % 4;
    var far = LANE + 4 * PITCH + LANE / 2;
    if (side === 0) return [LANE + k * PITCH + PITCH / 2, LANE / 2];
    if (side === 1) return [far, LANE + k * PITCH + PITCH / 2];
    if (side === 2) return [LANE + (3 - k) * PITCH + PITCH / 2, far];
    return [LANE / 2, LANE + (3 - k) * PITCH + PITCH / 2];
  }

  function mover(state) {
    var game = state.game;
    if (!game || game.to_move === null || game.to_move === undefined) return null;
    return game.players[game.to_move];
  }

  // ------------------------------------------------------------------ the display

  function renderDisplay(state) {
    var box = clear(byId('display'));
    var game = state.game;
    var size = 2 * LANE + 4 * PITCH;
    var svg = sv('svg', { viewBox: '0 0 ' + size + ' ' + size, class: 'display-svg',
      role: 'img', 'aria-label': 'The display and the explorer ship' });
    svg.appendChild(sv('rect', { x: 2, y: 2, width: size - 4, height: size - 4, rx: 26,
      fill: COLOURS.lane, stroke: COLOURS.laneLine, 'stroke-width': 2 }));
    svg.appendChild(sv('rect', { x: LANE - 4, y: LANE - 4, width: 4 * PITCH + 8,
      height: 4 * PITCH + 8, rx: 10, fill: COLOURS.seaDeep }));
    svg.appendChild(sv('text', { x: LANE / 2, y: LANE / 2, class: 'compass',
      'text-anchor': 'middle', 'dominant-baseline': 'central', text: 'N↑' }));
    var reach = reachOf(state);
    var selected = ui.selectedSlot;
    var selectedKey = selected ? selected[0] + ',' + selected[1] : null;
    var selectedPositions = {};
    if (selectedKey && reach.bySlot[selectedKey]) {
      reach.bySlot[selectedKey].forEach(function (o) { selectedPositions[o.position] = o.cost; });
    }
    var tiles = state.tiles;
    for (var r = 0; r < 4; r++) {
      for (var c = 0; c < 4; c++) {
        var id = game ? game.display[r][c] : null;
        var key = r + ',' + c;
        var options = reach.bySlot[key];
        var classes = ['slot'];
        if (game && !game.over) classes.push(options ? 'takeable' : 'out-of-reach');
        if (key === selectedKey) classes.push('selected');
        if (hooks.slotClass) classes.push(hooks.slotClass([r, c]) || '');
        var g = sv('g', {
          class: classes.join(' '), 'data-slot': key, tabindex: game ? 0 : null,
          transform: 'translate(' + (LANE + c * PITCH + GAP / 2) + ' ' + (LANE + r * PITCH + GAP / 2)
            + ') scale(' + ((PITCH - GAP) / TILE) + ')'
        });
        g.appendChild(sv('title', { text: id ? describeMeaning(tiles[id]) + ' (' + cellName([r, c]) + ')'
          : 'empty: ' + cellName([r, c]) }));
        if (id) g.appendChild(tileArt(tiles[id], 0));
        else g.appendChild(sv('rect', { x: 4, y: 4, width: 92, height: 92, rx: 6, class: 'empty-slot' }));
        if (game && !game.over && id) {
          if (options) {
            var cost = options[0].cost;
            g.appendChild(sv('circle', { cx: 83, cy: 17, r: 14, class: cost ? 'badge paid' : 'badge free' }));
            g.appendChild(sv('text', { x: 83, y: 18, class: 'badge-text', 'text-anchor': 'middle',
              'dominant-baseline': 'central', text: String(cost) }));
          } else {
            g.appendChild(sv('rect', { x: 0, y: 0, width: 100, height: 100, rx: 6, class: 'dim' }));
          }
        }
        g.appendChild(sv('rect', { x: 1.5, y: 1.5, width: 97, height: 97, rx: 6, class: 'slot-ring' }));
        g.addEventListener('click', slotHandler([r, c]));
        g.addEventListener('keydown', keyActivate(slotHandler([r, c])));
        svg.appendChild(g);
      }
    }
    // The lane: every spot the ship can stand on, what reaching it costs, and the ship.
    for (var p = 0; p < 16; p++) {
      var pt = lanePoint(p);
      var entry = game && !game.over ? reach.byPosition[p] : null;
      var spotClasses = ['spot'];
      if (entry) spotClasses.push(entry.move_cost ? 'paid' : 'free');
      if (selectedKey && !(game && game.ship === p)) spotClasses.push(p in selectedPositions ? 'can-take' : 'cannot-take');
      if (hooks.laneClass) spotClasses.push(hooks.laneClass(p) || '');
      var spot = sv('g', { class: spotClasses.join(' '), 'data-position': p, tabindex: game ? 0 : null });
      spot.appendChild(sv('title', { text: positionName(p) + (entry ? ': ' + plural(entry.steps, 'step')
        + ', ' + plural(entry.move_cost, 'shell') : '') }));
      spot.appendChild(sv('circle', { cx: pt[0], cy: pt[1], r: 21, class: 'spot-circle' }));
      if (game && game.ship === p) {
        spot.appendChild(sv('circle', { cx: pt[0], cy: pt[1], r: 24, class: 'ship-bg' }));
        spot.appendChild(boat(pt[0], pt[1] - 1, 2.1));
      } else if (entry) {
        var label = selectedKey && p in selectedPositions ? selectedPositions[p] : entry.move_cost;
        spot.appendChild(sv('text', { x: pt[0], y: pt[1] + 1, class: 'spot-text', 'text-anchor': 'middle',
          'dominant-baseline': 'central', text: String(label) }));
      }
      spot.addEventListener('click', laneHandler(p));
      spot.addEventListener('keydown', keyActivate(laneHandler(p)));
      svg.appendChild(spot);
    }
    box.appendChild(svg);
    renderReachInfo(state, reach);
  }

  function keyActivate(handler) {
    return function (event) {
      if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); handler(event); }
    };
  }
  function slotHandler(slot) {
    return function () {
      if (hooks.displayTap && hooks.displayTap(slot) === false) return;
      var same = ui.selectedSlot && ui.selectedSlot[0] === slot[0] && ui.selectedSlot[1] === slot[1];
      ui.selectedSlot = same ? null : slot;
      render();
    };
  }
  function laneHandler(p) {
    return function () { if (hooks.laneTap) hooks.laneTap(p); };
  }

  function renderReachInfo(state, reach) {
    var info = clear(byId('reach-info'));
    var who = mover(state);
    var game = state.game;
    if (!game) { info.textContent = 'No game yet.'; return; }
    if (game.over || !who) { info.textContent = 'The game is over.'; return; }
    var slot = ui.selectedSlot;
    if (!slot) {
      info.appendChild(document.createTextNode('Tap a tile to see what it costs '));
      info.appendChild(el('strong', { text: who.name }));
      info.appendChild(document.createTextNode('. Badges: total shells to take it (0 = free). '
        + 'Lane numbers: shells to move there. Darkened tiles: out of ' + who.name
        + '’s reach this turn.'));
      return;
    }
    var id = game.display[slot[0]][slot[1]];
    var options = reach.bySlot[slot[0] + ',' + slot[1]];
    info.appendChild(el('strong', { text: (id ? describeMeaning(state.tiles[id]) : 'Empty')
      + ' · ' + cellName(slot) + ': ' }));
    if (!id) { info.appendChild(document.createTextNode('nothing to take.')); return; }
    if (!options) {
      info.appendChild(document.createTextNode(who.name + ' cannot take it this turn '
        + '(too far for the shells, or behind a volcano).'));
      return;
    }
    info.appendChild(document.createTextNode(options.map(function (o) {
      return plural(o.steps, 'step') + ' (' + positionName(o.position) + ') → '
        + (o.cost ? plural(o.cost, 'shell') : 'free');
    }).join('; ') + '.'));
  }

  // ------------------------------------------------------------------ banner

  function renderBanner(state) {
    var banner = clear(byId('banner'));
    var game = state.game;
    var who = mover(state);
    var title, sub = [];
    banner.className = 'banner';
    if (!game) {
      title = state.learning ? 'Learning this box’s tiles' : 'Waiting for a new game';
      sub.push(state.you && state.you.host ? 'Set one up with "New game" below.'
        : 'The host sets up the game.');
    } else if (game.over) {
      var winners = game.winners;
      title = winners.join(' and ') + (winners.length > 1 ? ' win!' : ' wins!');
      var best = game.players.filter(function (p) { return winners.indexOf(p.name) >= 0; })[0];
      if (best) {
        sub.push(plural(best.score.total, 'point'));
        banner.style.setProperty('--who', colourOf(best.colour));
      }
      banner.classList.add('over');
    } else {
      title = who.name + '’s turn';
      banner.style.setProperty('--who', colourOf(who.colour));
      sub.push('turn ' + (game.turn_number + 1));
      sub.push(plural(who.shells, 'shell'));
      sub.push(plural(who.boats, 'boat'));
      if (game.final_round) sub.push('final round');
    }
    banner.appendChild(el('div', { class: 'banner-title', id: 'whose-turn', text: title }));
    var line = el('div', { class: 'banner-sub' }, [sub.join(' · ')]);
    if (state.status === 'reading') line.appendChild(el('span', { class: 'tag reading', text: 'reading the table…' }));
    if (state.phase === 'confirm') line.appendChild(el('span', { class: 'tag question', text: 'waiting for the host' }));
    banner.appendChild(line);
    var learning = state.learning;
    if (learning) {
      // Once per box, before its first read: what learns, how far, how long still.
      banner.appendChild(el('div', { class: 'banner-learning', id: 'learning' }, [
        el('span', { text: learning.sentence + '. The first read waits for it; later reads do not.' }),
        learning.total ? el('progress', { max: learning.total, value: learning.done }) : null
      ]));
    }
    var facts = byId('table-facts');
    if (facts) {
      facts.textContent = game ? [
        { base: 'base game', advanced: 'advanced', pro: 'pro' }[game.variant],
        game.side === 'atoll' ? 'atoll side' : 'front side',
        game.matching === 'strict' ? 'strict matching' : 'free placement',
        plural(game.stack_left, 'tile') + ' left'
      ].join(' · ') : '';
    }
  }

  // ------------------------------------------------------------------ the saved game: not saved, damaged

  function renderUnsaved(state) {
    var box = clear(byId('unsaved'));
    box.hidden = !state.unsaved;
    if (!state.unsaved) return;
    box.appendChild(el('h2', { text: 'Not saved' }));
    box.appendChild(el('p', { class: 'question-reason', text: state.unsaved }));
    box.appendChild(el('p', { class: 'hint', text: 'The last change was not made: make it again once the companion can save.' }));
  }

  function renderDamage(state) {
    var box = byId('damage');
    var damage = state.damage;
    clear(box);
    box.hidden = !damage;
    if (!damage) return;
    var host = state.you && state.you.host;
    box.appendChild(el('h2', { text: 'The saved game is damaged' }));
    box.appendChild(el('p', { class: 'question-reason', text: 'What is wrong: ' + damage.problem + '.' }));
    if (damage.kept) {
      box.appendChild(el('p', { class: 'hint', text: 'A copy of the damaged file is kept as ' + damage.kept
        + ' in the companion’s state folder.' }));
    }
    if (!host) {
      box.appendChild(el('p', { class: 'hint', text: 'The host chooses how to go on.' }));
      return;
    }
    var actions = el('div', { class: 'actions' });
    if (damage.turn_number !== null) {
      actions.appendChild(el('button', { type: 'button', class: 'primary', id: 'btn-resume-saved',
        text: damage.turn_number ? 'Resume after turn ' + damage.turn_number + ', the last good one'
          : 'Resume the game as it was set up',
        onclick: function () { if (api.resumeSaved) api.resumeSaved(); } }));
    }
    actions.appendChild(el('button', { type: 'button', id: 'btn-damage-new', text: 'Start a new game',
      onclick: function () { if (api.newGame) api.newGame(); } }));
    box.appendChild(actions);
  }

  // ------------------------------------------------------------------ question

  function renderQuestion(state) {
    var box = byId('question');
    var q = state.question;
    clear(box);
    box.hidden = !q;
    if (!q) return;
    box.appendChild(el('h2', { text: 'Which turn was it?' }));
    box.appendChild(el('p', { class: 'question-reason', text: tileWords(q.reason, state.tiles) }));
    var list = el('ol', { class: 'choices' });
    q.choices.forEach(function (choice, index) {
      var item = el('li', { class: 'choice' });
      var tile = choiceTile(state, choice.action);
      if (tile) item.appendChild(tileSvg(state.tiles[tile], choice.action.rotation || 0, { class: 'tile-svg mini' }));
      item.appendChild(el('span', { class: 'choice-text', text: tileWords(choice.text, state.tiles) }));
      if (state.you && state.you.host) {
        item.appendChild(el('button', { type: 'button', class: 'primary small', 'data-choice': index,
          text: 'This one', onclick: function () { if (api.confirm) api.confirm(index); } }));
      }
      list.appendChild(item);
    });
    box.appendChild(list);
    if (state.you && state.you.host) {
      box.appendChild(el('button', { type: 'button', class: 'quiet', text: 'None: fix the table and press again',
        onclick: function () { if (api.dismiss) api.dismiss(); } }));
    } else {
      box.appendChild(el('p', { class: 'hint', text: 'The host picks the right one.' }));
    }
  }

  /* The tile a question's choice lays, to draw it as it would lie. */
  function choiceTile(state, action) {
    var game = state.game;
    if (!game || !action) return null;
    if (action.type === 'take_to_board' || action.type === 'take_to_storage') {
      return game.display[action.slot[0]][action.slot[1]];
    }
    if (action.type === 'storage_to_board') {
      var who = mover(state);
      return who ? who.storage : null;
    }
    return null;
  }

  // ------------------------------------------------------------------ players

  function boardSvg(state, player, index) {
    var game = state.game;
    var layout = game.layout;
    var removed = {};
    (player.score.removed || []).forEach(function (cell) { removed[cell[0] + ',' + cell[1]] = true; });
    var svg = sv('svg', { viewBox: '-3 -3 ' + (layout.cols * TILE + 6) + ' ' + (layout.rows * TILE + 6),
      class: 'board-svg', role: 'img', 'aria-label': player.name + '’s board' });
    for (var r = 0; r < layout.rows; r++) {
      for (var c = 0; c < layout.cols; c++) {
        var mapCell = layout.map[r][c];
        if (mapCell === '#') continue;
        var placed = player.board[r][c];
        var classes = ['cell'];
        if (hooks.boardCellClass) classes.push(hooks.boardCellClass(index, [r, c], placed) || '');
        var g = sv('g', { class: classes.join(' '), 'data-cell': r + ',' + c,
          transform: 'translate(' + (c * TILE) + ' ' + (r * TILE) + ')' });
        if (placed && typeof placed === 'object') {
          g.appendChild(sv('title', { text: describeMeaning(state.tiles[placed.tile]) + ', turned '
            + placed.rotation + '° (' + cellName([r, c]) + ')' }));
          var art = tileArt(state.tiles[placed.tile], placed.rotation);
          art.setAttribute('transform', 'translate(2 2) scale(0.96)');
          g.appendChild(art);
          if (removed[r + ',' + c]) {
            g.appendChild(sv('rect', { x: 2, y: 2, width: 96, height: 96, rx: 6, class: 'removed' }));
          }
        } else {
          g.appendChild(sv('title', { text: 'empty: ' + cellName([r, c]) }));
          g.appendChild(sv('rect', { x: 3, y: 3, width: 94, height: 94, rx: 6,
            class: mapCell === 'a' ? 'board-empty atoll' : 'board-empty' }));
          var ghost = hooks.boardGhost ? hooks.boardGhost(index, [r, c]) : null;
          if (ghost) {
            var shade = tileArt(state.tiles[ghost.tile], ghost.rotation);
            shade.setAttribute('transform', 'translate(2 2) scale(0.96)');
            shade.setAttribute('class', 'tile-art ghost');
            g.appendChild(shade);
          }
        }
        g.appendChild(sv('rect', { x: 2, y: 2, width: 96, height: 96, rx: 6, class: 'cell-ring' }));
        if (player.ship && player.ship[0] === r && player.ship[1] === c) {
          g.appendChild(sv('circle', { cx: 50, cy: 50, r: 22, class: 'player-ship',
            stroke: colourOf(player.colour) }));
          g.appendChild(boat(50, 50, 1.3));
        }
        g.addEventListener('click', boardHandler(index, [r, c]));
        svg.appendChild(g);
      }
    }
    return svg;
  }
  function boardHandler(index, cell) {
    return function () { if (hooks.boardTap) hooks.boardTap(index, cell); };
  }

  function storageSvg(state, player, index) {
    var classes = ['storage'];
    if (hooks.storageClass) classes.push(hooks.storageClass(index) || '');
    var svg = sv('svg', { viewBox: '-3 -3 106 106', class: 'storage-svg ' + classes.join(' '),
      role: 'img', 'aria-label': 'storage' });
    if (player.storage) {
      svg.appendChild(sv('title', { text: 'Storage: ' + describeMeaning(state.tiles[player.storage]) }));
      svg.appendChild(tileArt(state.tiles[player.storage], 0));
    } else {
      svg.appendChild(sv('title', { text: 'Storage: empty' }));
      svg.appendChild(sv('rect', { x: 3, y: 3, width: 94, height: 94, rx: 6, class: 'board-empty storage-empty' }));
    }
    svg.addEventListener('click', function () { if (hooks.storageTap) hooks.storageTap(index); });
    return svg;
  }

  /* A count and what it counts, in agreement with it ("1 shell", "2 shells"), and a note. */
  function stat(word, value, cls, note) {
    var label = value === 1 ? word : word.replace(/^(\w+)/, '$1s');
    return el('div', { class: 'stat ' + (cls || '') }, [
      el('span', { class: 'stat-value', text: String(value) }),
      el('span', { class: 'stat-label', text: label }),
      note ? el('span', { class: 'stat-note', text: note }) : null
    ]);
  }

  /* Boats on a board that stand on incomplete islands: they move the ship but do not score. */
  function boatsNote(p) {
    var off = p.boats - p.score.boat_count;
    if (off <= 0) return null;
    return off + (off === 1 ? ' stands on an incomplete island' : ' stand on incomplete islands')
      + ': ' + plural(p.score.boat_count, 'boat') + ' in the score';
  }

  function renderPlayers(state) {
    var box = clear(byId('players'));
    var game = state.game;
    box.hidden = !game;
    if (!game) return;
    game.players.forEach(function (p, index) {
      var colour = colourOf(p.colour);
      var winner = game.over && game.winners.indexOf(p.name) >= 0;
      var card = el('article', { class: 'card player' + (p.to_move ? ' to-move' : '') + (winner ? ' winner' : ''),
        'data-player': index });
      card.style.setProperty('--who', colour);
      card.appendChild(el('header', { class: 'player-head' }, [
        el('span', { class: 'swatch' + (isLight(colour) ? ' light' : '') }),
        el('h3', { text: p.name }),
        el('span', { class: 'seat', text: 'seat ' + p.seat }),
        p.to_move ? el('span', { class: 'tag now', text: 'to move' }) : null,
        winner ? el('span', { class: 'tag win', text: 'winner' }) : null
      ]));
      var side = el('div', { class: 'player-side' }, [
        stat('shell', p.shells, 'shells'),
        stat('boat', p.boats, 'boats', boatsNote(p)),
        stat(game.over ? 'point' : 'point now', p.score.total, 'points'),
        el('div', { class: 'storage-box' }, [
          storageSvg(state, p, index), el('span', { class: 'stat-label', text: 'storage' })
        ])
      ]);
      card.appendChild(el('div', { class: 'player-body' }, [boardSvg(state, p, index), side]));
      box.appendChild(card);
    });
    var incomplete = game.players.some(function (p) { return (p.score.removed || []).length; });
    if (incomplete) {
      box.appendChild(el('p', { class: 'hint board-legend', id: 'board-legend',
        text: 'Tiles outlined in red dashes lie on incomplete islands: '
          + (game.over ? 'they were taken off before scoring.'
            : 'they score nothing (nor do their boats) unless the island is completed.') }));
    }
  }

  // ------------------------------------------------------------------ scores

  var SCORE_ROWS = [
    ['Palms without hut', function (s) { return s.palms_no_hut; }],
    ['Palms with hut', function (s) { return s.palms_hut; }],
    ['Leis', function (s) { return s.leis; }, function (s) { return plural(s.leis / 10, 'lei'); }],
    ['Boats (majority)', function (s) { return s.boats; }, function (s) { return plural(s.boat_count, 'boat'); }],
    ['Shells (majority)', function (s) { return s.shells; }, function (s) { return plural(s.shell_count, 'shell'); }],
    ['Empty fields', function (s) { return s.empty; }, function (s) { return plural(-s.empty, 'field'); }]
  ];

  function scoreTable(state, final) {
    var game = state.game;
    var players = game.players;
    var top = Math.max.apply(null, players.map(function (p) { return p.score.total; }));
    function lead(p) {
      return final ? game.winners.indexOf(p.name) >= 0 : p.score.total === top;
    }
    var table = el('table', { class: 'scores' + (final ? ' final-table' : '') });
    table.appendChild(el('thead', {}, [el('tr', {}, [el('th', { scope: 'col', text: '' })].concat(
      players.map(function (p) {
        var th = el('th', { scope: 'col', class: lead(p) ? 'lead' : '' }, [
          el('span', { class: 'swatch' }), (final && lead(p) ? '★ ' : '') + p.name
        ]);
        th.style.setProperty('--who', colourOf(p.colour));
        return th;
      })))]));
    var body = el('tbody');
    SCORE_ROWS.forEach(function (row) {
      body.appendChild(el('tr', {}, [el('th', { scope: 'row', text: row[0] })].concat(
        players.map(function (p) {
          var cell = el('td', { class: lead(p) ? 'lead' : '' }, [String(row[1](p.score))]);
          if (row[2]) cell.appendChild(el('small', { text: row[2](p.score) }));
          return cell;
        }))));
    });
    body.appendChild(el('tr', { class: 'total' }, [el('th', { scope: 'row', text: 'Total' })].concat(
      players.map(function (p) {
        return el('td', { class: lead(p) ? 'lead' : '', text: String(p.score.total) });
      }))));
    table.appendChild(body);
    return table;
  }

  function renderScores(state) {
    var game = state.game;
    var card = byId('scores-card');
    var final = byId('final');
    clear(byId('scores'));
    clear(final);
    card.hidden = !game || game.over;
    final.hidden = !game || !game.over;
    if (!game) return;
    if (game.over) {
      final.appendChild(el('h2', { text: 'Final score' }));
      if (game.winners.length > 1) {
        final.appendChild(el('p', { class: 'winners', text: '★ ' + game.winners.join(' and ') + ' share the win' }));
      }
      final.appendChild(el('div', { class: 'scroll-x' }, [scoreTable(state, true)]));
      final.appendChild(el('p', { class: 'hint', text: 'Incomplete islands were taken off first '
        + '(shaded on the boards). A tie is broken by the shells held.' }));
    } else {
      byId('scores').appendChild(scoreTable(state, false));
    }
  }

  // ------------------------------------------------------------------ log & camera

  var LOG_TAGS = {
    refused: 'refused', question: 'question', unreadable: 'can’t read', undo: 'undo'
  };

  function clock(seconds) {
    var d = new Date(seconds * 1000);
    return ('0' + d.getHours()).slice(-2) + ':' + ('0' + d.getMinutes()).slice(-2);
  }

  function renderLog(state) {
    var list = clear(byId('log'));
    var entries = state.log.slice().reverse();
    var shown = ui.logExpanded ? entries : entries.slice(0, LOG_SHORT);
    shown.forEach(function (entry) {
      list.appendChild(el('li', { class: 'log-entry log-' + entry.kind, value: entry.seq }, [
        el('time', { text: clock(entry.at) }),
        LOG_TAGS[entry.kind] ? el('span', { class: 'tag', text: LOG_TAGS[entry.kind] }) : null,
        el('span', { class: 'log-text', text: tileWords(entry.text, state.tiles) })
      ]));
    });
    if (!entries.length) list.appendChild(el('li', { class: 'log-entry empty', text: 'Nothing yet.' }));
    var more = byId('log-more');
    more.hidden = entries.length <= LOG_SHORT;
    more.textContent = ui.logExpanded ? 'Show fewer' : 'Show all ' + entries.length + ' lines';
  }

  function renderCamera(state) {
    var cam = state.camera;
    var pill = byId('camera-status');
    pill.textContent = { ok: 'seeing the table', lost: 'lost', none: 'off', reading: 'reading' }[cam.status]
      || cam.status;
    pill.className = 'pill cam-' + cam.status;
    byId('camera-message').textContent = cam.message;
    var img = byId('snapshot');
    if (!cam.snapshot_at) { img.hidden = true; return; }
    if (cam.snapshot_at === ui.lastSnapshotAt || ui.snapshotTimer) return;
    var interval = ((state.web && state.web.snapshot_interval_s) || 1) * 1000;
    var wait = Math.max(0, interval - (Date.now() - (ui.lastSnapshotLoad || 0)));
    ui.snapshotTimer = setTimeout(function () {
      ui.snapshotTimer = null;
      ui.lastSnapshotAt = current.camera.snapshot_at;
      ui.lastSnapshotLoad = Date.now();
      img.src = '/snapshot.jpg?at=' + encodeURIComponent(String(ui.lastSnapshotAt));
      img.hidden = false;
    }, wait);
  }

  // ------------------------------------------------------------------ render & live

  function render() {
    var state = current;
    renderBanner(state);
    renderUnsaved(state);
    renderDamage(state);
    renderQuestion(state);
    renderDisplay(state);
    renderPlayers(state);
    renderScores(state);
    renderLog(state);
    renderCamera(state);
    hooks.afterRender.forEach(function (fn) { fn(state); });
  }

  var fetching = false, again = false;
  function refresh() {
    if (fetching) { again = true; return Promise.resolve(); }
    fetching = true;
    return fetch('/api/state', { cache: 'no-store', credentials: 'same-origin' })
      .then(function (response) { return response.json(); })
      .then(function (state) { current = state; render(); })
      .catch(function () { setLive('offline'); })
      .then(function () {
        fetching = false;
        if (again) { again = false; refresh(); }
      });
  }

  byId('snapshot').addEventListener('error', function (event) { event.target.hidden = true; });
  byId('log-more').addEventListener('click', function () {
    ui.logExpanded = !ui.logExpanded;
    renderLog(current);
  });

  var api = {};
  window.Companion = {
    el: el, sv: sv, clear: clear, tileArt: tileArt, tileSvg: tileSvg, describeMeaning: describeMeaning,
    tileWords: tileWords,
    colourOf: colourOf, plural: plural, cellName: cellName, positionName: positionName,
    reachOf: reachOf, mover: mover, hooks: hooks, ui: ui, api: api, render: render,
    refresh: refresh, toast: toast,
    state: function () { return current; },
    setState: function (state) { current = state; render(); }
  };

  render();
  common.follow('/events', function (version) { if (version !== current.version) refresh(); });
})();
