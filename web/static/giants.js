/* Giants on the phones: the island drawn from the game's own data (hexes, quarries, forests,
 * the village, the sorcerer's hut, the Ahus with their black and red numbers, pieces, logs,
 * Moai with their sizes and headdresses) and, for the host, moves entered by tapping it: a
 * piece or a load, then where it goes. The page only ever plays one of the legal actions the
 * companion lists (/api/games/state), matched to the taps; nothing shows an id.
 * Used by games.js (the game) and giants-count.js (the final count). Vanilla JS. */
(function () {
  'use strict';

  var common = window.CompanionCommon;
  var el = common.el, sv = common.sv, clear = common.clear;

  var R = 30;                                   // a hex's corner radius in drawing units
  var S3 = Math.sqrt(3);
  var COLOURS = ['#d63a2f', '#2f63c9', '#e2b21f', '#2f9a4a', '#8a4fc2'];
  var COLOUR_NAMES = ['red', 'blue', 'yellow', 'green', 'purple'];
  var KIND_WORDS = { village: 'village', hut: 'hut', moai_quarry: 'Moai quarry',
    headdress_quarry: 'headdress quarry' };
  var PIECE_WORDS = { worker: 'Worker', sorcerer: 'Sorcerer', chief: 'Chief' };

  // What the host has tapped so far: a piece (placing) or a load (transport), logs to add,
  // the dice faces, the bid's hands, and a question about where exactly (several moves).
  var pick = { piece: null, logs: 0, load: null, dice: [], bid: null, round: null, choices: null, helping: null };

  // A phone held upright gets the island turned a quarter clockwise (its west at the top),
  // so that it fills the width with hexes a thumb wide; the words on it stay upright.
  var TURN = 0;
  function turned() { return window.innerWidth < 700 ? 90 : 0; }
  function centre(q, r) {
    var x = R * S3 * (q + r / 2), y = R * 1.5 * r;
    return TURN ? [-y, x] : [x, y];
  }
  function corners(x, y, size) {
    var out = [];
    for (var i = 0; i < 6; i++) {
      var a = Math.PI / 180 * (60 * i - 30 + TURN);
      out.push((x + size * Math.cos(a)).toFixed(1) + ',' + (y + size * Math.sin(a)).toFixed(1));
    }
    return out.join(' ');
  }
  function f(n) { return n.toFixed(1); }

  function colourIndex(names, name) { return names.indexOf(name); }
  function colourOf(names, name) { var i = colourIndex(names, name); return i < 0 ? '#777' : COLOURS[i % COLOURS.length]; }
  function colourName(names, name) { var i = colourIndex(names, name); return i < 0 ? '' : COLOUR_NAMES[i % COLOUR_NAMES.length]; }

  // Where an Ahu is drawn: beyond the middle of its edge, on the sea side, moved along the
  // edge when two share it. Returns [x, y, angle of the edge's outward normal in degrees].
  function ahuSpot(hex, place, out) {
    var c = centre(hex.q, hex.r), deg = 60 * place.edge + TURN, a = Math.PI / 180 * deg;
    var reach = R * S3 / 2 + out, side = place.along * R * 0.95;
    return [c[0] + reach * Math.cos(a) - side * Math.sin(a), c[1] + reach * Math.sin(a) + side * Math.cos(a), deg];
  }

  function itemWords(item) { return item.kind === 'moai' ? 'Moai of size ' + item.size : 'headdress'; }

  // ------------------------------------------------------------------ drawing

  // The island as an SVG. `opts`: names (players in turn order, for colours), targets
  // ({hexes: {id: true}, ahus: {id: true}, items: {id: true}}), chosen (an item id), onHex,
  // onAhu, onItem (taps; none for a guest), count ({ahu: {owner, size, headdress}}: the final
  // count's Moai instead of the game's), label.
  function drawIsland(island, layout, opts) {
    var names = opts.names || [];
    var targets = opts.targets || { hexes: {}, ahus: {}, items: {} };
    var byId = {};
    TURN = turned();
    island.hexes.forEach(function (h) { byId[h.id] = h; });
    var xs = [], ys = [];
    island.hexes.forEach(function (h) { var c = centre(h.q, h.r); xs.push(c[0]); ys.push(c[1]); });
    var pad = R * 1.9;
    var minX = Math.min.apply(null, xs) - pad, minY = Math.min.apply(null, ys) - pad;
    var w = Math.max.apply(null, xs) + pad - minX, h = Math.max.apply(null, ys) + pad - minY;
    var svg = sv('svg', { class: 'giants-island' + (opts.onHex ? ' tappable' : ''),
      viewBox: [minX, minY, w, h].map(f).join(' '), role: 'group',
      'aria-label': opts.label || 'The island' });
    svg.appendChild(sv('rect', { x: f(minX), y: f(minY), width: f(w), height: f(h), class: 'sea' }));
    // Which way the board's north lies (the words "in the north-west" name the board's sides).
    svg.appendChild(sv('text', { x: f(minX + 8), y: f(minY + 16), class: 'g-north', text: TURN ? 'N →' : 'N ↑' }));
    var hexLayer = sv('g'), ahuLayer = sv('g'), itemLayer = sv('g');
    svg.appendChild(hexLayer); svg.appendChild(ahuLayer); svg.appendChild(itemLayer);

    island.hexes.forEach(function (hx) {
      var c = centre(hx.q, hx.r), x = c[0], y = c[1];
      var name = layout.hexes[hx.id] ? layout.hexes[hx.id].name : '';
      var g = sv('g', { class: 'g-hex g-' + hx.kind + (targets.hexes[hx.id] ? ' target' : ''),
        'data-hex': name, 'aria-label': name });
      if (opts.onHex) {
        g.setAttribute('role', 'button');
        g.setAttribute('tabindex', '0');
        g.addEventListener('click', function () { opts.onHex(hx); });
        g.addEventListener('keydown', function (e) { if (e.key === 'Enter') opts.onHex(hx); });
      }
      g.appendChild(sv('polygon', { points: corners(x, y, R - 0.8), class: 'g-shape' }));
      var word = KIND_WORDS[hx.kind];
      if (word) {
        word.split(' ').forEach(function (part, i, all) {
          g.appendChild(sv('text', { x: f(x), y: f(y - 10 + (i - (all.length - 1) / 2) * 8), class: 'g-place',
            'text-anchor': 'middle', text: part }));
        });
      }
      if (hx.kind === 'forest') {
        g.appendChild(sv('path', { class: 'g-tree', d: 'M' + f(x) + ' ' + f(y - 20) + ' l7 11 h-4 l6 8 h-18 l6 -8 h-4 z' }));
        if (hx.logs !== undefined && hx.logs !== null) {
          g.appendChild(sv('text', { x: f(x + 13), y: f(y - 8), class: 'g-logs-left', 'text-anchor': 'middle',
            text: hx.logs ? String(hx.logs) : '–' }));
        }
      }
      drawPieces(g, hx, x, y, names);
      hexLayer.appendChild(g);
    });

    island.ahus.forEach(function (a) {
      var place = layout.ahus[a.id], hx = byId[a.hex];
      if (!place || !hx) return;
      var spot = ahuSpot(hx, place, 8), x = spot[0], y = spot[1];
      var name = place.name;
      var counted = opts.count ? opts.count[a.id] : null;
      var owner = counted ? counted.owner : a.base;
      var moaiSize = counted ? counted.size : a.size;
      var capped = counted ? counted.headdress : !!a.headdress;
      var g = sv('g', { class: 'g-ahu' + (targets.ahus[a.id] ? ' target' : '') + (moaiSize ? ' has-moai' : ''),
        'data-ahu': name, 'aria-label': name + (moaiSize ? ': Moai of size ' + moaiSize
          + (capped ? ' with a headdress' : '') + (owner && owner !== 'hidden' ? ', ' + owner : '') : '') });
      if (opts.onAhu) {
        g.setAttribute('role', 'button');
        g.setAttribute('tabindex', '0');
        g.addEventListener('click', function (e) { e.stopPropagation(); opts.onAhu(a); });
        g.addEventListener('keydown', function (e) { if (e.key === 'Enter') opts.onAhu(a); });
      }
      g.appendChild(sv('rect', { x: f(x - 15), y: f(y - 10), width: 30, height: 20, rx: 4, class: 'g-hit' }));
      var base = owner ? (owner === 'hidden' ? '#8d8d8d' : colourOf(names, owner)) : null;
      g.appendChild(sv('rect', { x: f(x - 12), y: f(y - 5.5), width: 24, height: 11, rx: 2,
        class: 'g-platform' + (base ? ' based' : ''), stroke: base, 'stroke-dasharray': a.reserved ? '3 2' : null }));
      g.appendChild(sv('text', { x: f(x - 5), y: f(y + 3.2), class: 'g-black', 'text-anchor': 'middle', text: a.value }));
      g.appendChild(sv('text', { x: f(x + 5), y: f(y + 3.2), class: 'g-red', 'text-anchor': 'middle',
        text: a.headdress_value }));
      if (moaiSize) {
        var m = ahuSpot(hx, place, 23);
        g.appendChild(sv('circle', { cx: f(m[0]), cy: f(m[1]), r: 5 + 1.5 * moaiSize,
          class: 'g-moai standing', stroke: capped ? '#a8402a' : null, 'stroke-width': capped ? 3 : null }));
        g.appendChild(sv('text', { x: f(m[0]), y: f(m[1] + 3), class: 'g-size', 'text-anchor': 'middle', text: moaiSize }));
        if (base && owner !== 'hidden') {
          g.appendChild(sv('circle', { cx: f(m[0] + 6 + moaiSize), cy: f(m[1] - 6 - moaiSize), r: 3, fill: base, class: 'g-owner' }));
        }
      }
      ahuLayer.appendChild(g);
    });

    // Moai and headdresses lying on the island (not yet erected).
    var lying = {};
    (opts.items || []).forEach(function (item) {
      if (item.hex && !item.ahu) (lying[item.hex] = lying[item.hex] || []).push(item);
    });
    Object.keys(lying).forEach(function (hexId) {
      var hx = byId[hexId], c = centre(hx.q, hx.r), here = lying[hexId];
      if (here.length > 4) { itemLayer.appendChild(pileNode(here, c[0], c[1] + 8, targets, opts)); return; }
      here.forEach(function (item, i) {
        var x = c[0] - 9 + 14 * (i % 2), y = c[1] + 12 - 12 * Math.floor(i / 2);
        itemLayer.appendChild(loadNode(item, x, y, names, targets, opts));
      });
    });
    return svg;
  }

  // Many loads on one hex: one pile showing how many; a tap asks which.
  function pileNode(items, x, y, targets, opts) {
    var g = sv('g', { class: 'g-load g-pile' + (items.some(function (i) { return targets.items[i.id]; }) ? ' target' : '')
      + (items.some(function (i) { return opts.chosen === i.id; }) ? ' chosen' : ''),
    'aria-label': items.length + ' Moai and headdresses' });
    if (opts.onPile) {
      g.setAttribute('role', 'button');
      g.addEventListener('click', function (e) { e.stopPropagation(); opts.onPile(items); });
    }
    g.appendChild(sv('circle', { cx: f(x), cy: f(y), r: 13, class: 'g-hit' }));
    g.appendChild(sv('ellipse', { cx: f(x), cy: f(y), rx: 10, ry: 8, class: 'g-moai' }));
    g.appendChild(sv('text', { x: f(x), y: f(y + 3), class: 'g-size', 'text-anchor': 'middle', text: '×' + items.length }));
    return g;
  }

  function loadNode(item, x, y, names, targets, opts) {
    var chosen = opts.chosen === item.id;
    var g = sv('g', { class: 'g-load g-' + item.kind + (targets.items[item.id] ? ' target' : '') + (chosen ? ' chosen' : ''),
      'data-load': item.id, 'aria-label': itemWords(item) });
    if (opts.onItem) {
      g.setAttribute('role', 'button');
      g.addEventListener('click', function (e) { e.stopPropagation(); opts.onItem(item); });
    }
    g.appendChild(sv('circle', { cx: f(x), cy: f(y), r: 10, class: 'g-hit' }));
    if (item.kind === 'moai') {
      g.appendChild(sv('ellipse', { cx: f(x), cy: f(y), rx: 4 + 1.6 * item.size, ry: 4 + item.size, class: 'g-moai' }));
      g.appendChild(sv('text', { x: f(x), y: f(y + 3), class: 'g-size', 'text-anchor': 'middle', text: item.size }));
    } else {
      g.appendChild(sv('circle', { cx: f(x), cy: f(y), r: 4.5, class: 'g-headdress' }));
    }
    if (item.owner && item.marked) {
      g.appendChild(sv('circle', { cx: f(x + 7), cy: f(y - 6), r: 3.2, fill: colourOf(names, item.owner), class: 'g-marker' }));
    }
    return g;
  }

  function drawPieces(g, hx, x, y, names) {
    var pieces = hx.pieces || [];
    pieces.forEach(function (p, i) {
      var a = Math.PI * 2 * i / Math.max(pieces.length, 1) - Math.PI / 2;
      var reach = pieces.length > 1 ? R * 0.42 : 0;
      var px = x + reach * Math.cos(a) + (pieces.length > 1 ? 0 : -10), py = y + 4 + reach * Math.sin(a) * 0.8;
      var fill = colourOf(names, p.owner), cls = 'g-piece g-' + p.piece + (p.powered ? ' powered' : '');
      if (p.piece === 'worker') g.appendChild(sv('circle', { cx: f(px), cy: f(py), r: 4.2, fill: fill, class: cls }));
      else if (p.piece === 'sorcerer') {
        g.appendChild(sv('polygon', { points: [px, py - 6, px + 5, py + 4, px - 5, py + 4].map(f).join(','), fill: fill, class: cls }));
      } else {
        g.appendChild(sv('rect', { x: f(px - 5), y: f(py - 5), width: 10, height: 10, rx: 1.5, fill: fill, class: cls }));
      }
    });
    if (hx.placed_logs) {
      for (var k = 0; k < Math.min(hx.placed_logs, 4); k++) {
        g.appendChild(sv('rect', { x: f(x + 5), y: f(y + 9 + 3.4 * k), width: 13, height: 2.6, rx: 1.2, class: 'g-log' }));
      }
    }
  }

  // ------------------------------------------------------------------ the game's card

  function legal(game) { return (game.actions || []).map(function (a) { return a; }); }
  function ofType(game, type) { return legal(game).filter(function (a) { return a.action.type === type; }); }

  function startHex(view, item) {
    if (item.hex) return item.hex;
    var kind = item.kind === 'moai' ? 'moai_quarry' : 'headdress_quarry';
    var hx = view.island.hexes.filter(function (h) { return h.kind === kind; })[0];
    return hx ? hx.id : null;
  }

  function moveEnd(view, item, action) {
    var path = action.path || [];
    return path.length ? path[path.length - 1] : startHex(view, item);
  }

  // What the taps so far allow: the hexes, Ahus and loads that finish a move.
  function targetsFor(game) {
    var t = { hexes: {}, ahus: {}, items: {} };
    var view = game.view;
    if (!game.actions || game.over) return t;
    if (view.phase === 'place' && pick.piece) {
      ofType(game, 'place').forEach(function (a) {
        if (a.action.piece !== pick.piece || (a.action.logs || 0) !== pick.logs) return;
        t.hexes[a.action.hex] = true;
        if (a.action.ahu) t.ahus[a.action.ahu] = true;
      });
    }
    if (view.phase === 'transport' || view.phase === 'marking' || view.phase === 'reclaim') {
      legal(game).forEach(function (a) { if (a.action.item) t.items[a.action.item] = true; });
    }
    if (view.phase === 'transport' && pick.load) {
      var item = itemById(view, pick.load);
      ofType(game, 'move').forEach(function (a) {
        if (a.action.item !== pick.load) return;
        var end = a.action.erect || a.action.cap;
        if (end) t.ahus[end] = true;
        else t.hexes[moveEnd(view, item, a.action)] = true;
      });
    }
    return t;
  }

  function itemById(view, id) { return view.items.filter(function (i) { return i.id === id; })[0]; }

  // Plays `candidates` (legal actions matching the taps): one at once, several after a
  // question naming each in words.
  function choose(candidates, ctx, question) {
    if (!candidates.length) { common.toast('That is not a move now: tap one of the marked places.', 'error'); return; }
    if (candidates.length === 1) { play(candidates[0], ctx); return; }
    pick.choices = { question: question, candidates: candidates };
    ctx.rerender();
  }

  function play(entry, ctx) {
    pick.choices = null;
    var steps = pick.game && pick.game.help ? pick.game.help[String(entry.index)] : null;
    if (steps) { pick.helping = { entry: entry, steps: steps, chosen: [] }; nextHelp(ctx); return; }
    send(entry.action, ctx);
  }

  function send(action, ctx) {
    pick.helping = null;
    ctx.act(action, function () { pick.piece = null; pick.load = null; pick.logs = 0; pick.dice = []; pick.bid = null; });
  }

  // The mover chooses who gets the points on each hex where several may (the companion lists
  // the ways); hexes with one way take it without a question.
  function nextHelp(ctx) {
    var h = pick.helping;
    while (h.chosen.length < h.steps.length && h.steps[h.chosen.length].ways.length === 1) {
      h.chosen.push(h.steps[h.chosen.length].ways[0]);
    }
    if (h.chosen.length === h.steps.length) {
      var action = JSON.parse(JSON.stringify(h.entry.action));
      action.help = h.chosen;
      send(action, ctx);
      return;
    }
    ctx.rerender();
  }

  function wayWords(way) {
    var names = Object.keys(way);
    if (!names.length) return 'Nobody';
    return names.map(function (n) { return n + ' ' + way[n] + (way[n] === 1 ? ' point' : ' points'); }).join(', ');
  }

  function helpPanel(ctx) {
    var h = pick.helping, step = h.steps[h.chosen.length];
    var question = 'Who gets the points on ' + step.hex + '?';
    var box = el('div', { class: 'g-choices g-help', role: 'group', 'aria-label': question },
      [el('p', { class: 'g-question', text: question })]);
    step.ways.forEach(function (way) {
      box.appendChild(button(wayWords(way), { class: 'action' }, function () { h.chosen.push(way); nextHelp(ctx); }));
    });
    box.appendChild(button('Cancel', { class: 'quiet' }, function () { pick.helping = null; ctx.rerender(); }));
    return box;
  }

  function tapHex(game, ctx, hx) {
    var view = game.view;
    if (view.phase === 'place') {
      if (!pick.piece) { common.toast('Tap a piece below first, then the hex it goes to.', 'error'); return; }
      var here = ofType(game, 'place').filter(function (a) {
        return a.action.piece === pick.piece && (a.action.logs || 0) === pick.logs && a.action.hex === hx.id;
      });
      choose(here, ctx, 'What does the ' + pick.piece + ' do there?');
      return;
    }
    if (view.phase === 'transport' && pick.load) {
      var item = itemById(view, pick.load);
      var ends = ofType(game, 'move').filter(function (a) {
        return a.action.item === pick.load && moveEnd(view, item, a.action) === hx.id;
      });
      choose(ends, ctx, 'What happens to the ' + itemWords(item) + ' there?');
      return;
    }
    if (view.phase === 'transport') common.toast('Tap a Moai or headdress first, then where it goes.', 'error');
    if (view.phase === 'marking') common.toast('Tap a marked Moai or headdress in its quarry to put a tribe marker on it.', 'error');
  }

  function tapAhu(game, ctx, ahu) {
    var view = game.view;
    if (view.phase === 'place' && pick.piece) {
      var here = ofType(game, 'place').filter(function (a) {
        return a.action.piece === pick.piece && (a.action.logs || 0) === pick.logs && a.action.ahu === ahu.id;
      });
      if (!here.length) { tapHex(game, ctx, { id: ahu.hex }); return; }
      choose(here, ctx, 'Which?');
      return;
    }
    if (view.phase === 'transport' && pick.load) {
      var item = itemById(view, pick.load);
      var onIt = ofType(game, 'move').filter(function (a) {
        return a.action.item === pick.load && (a.action.erect === ahu.id || a.action.cap === ahu.id);
      });
      choose(onIt, ctx, 'Who gets the points for the ' + itemWords(item) + '?');
      return;
    }
    tapHex(game, ctx, { id: ahu.hex });
  }

  function tapItem(game, ctx, item) {
    var view = game.view;
    if (view.phase === 'reclaim' || view.phase === 'marking') {
      var type = view.phase === 'reclaim' ? 'reclaim' : 'mark';
      var these = ofType(game, type).filter(function (a) { return a.action.item === item.id; });
      if (!these.length && view.phase === 'marking') {
        common.toast('That ' + itemWords(item) + ' cannot be marked now: only ' + game.to_move
          + '’s Moai and headdresses that did not move this turn.', 'error');
        return;
      }
      choose(these, ctx, 'Which?');
      return;
    }
    if (view.phase !== 'transport') return;
    if (pick.load && pick.load !== item.id && item.hex) {
      tapHex(game, ctx, { id: item.hex });  // a load lying where the chosen one may go
      return;
    }
    var mine = legal(game).some(function (a) { return a.action.item === item.id; });
    if (!mine) { common.toast('That ' + itemWords(item) + ' cannot be moved or marked now.', 'error'); return; }
    pick.load = pick.load === item.id ? null : item.id;
    pick.choices = null;
    ctx.rerender();
  }

  function tapPile(game, ctx, items) {
    var view = game.view;
    if (pick.load && items.every(function (i) { return i.id !== pick.load; })) {
      tapHex(game, ctx, { id: items[0].hex });
      return;
    }
    var movable = items.filter(function (i) { return legal(game).some(function (a) { return a.action.item === i.id; }); });
    if (!movable.length) { common.toast('None of these can be moved or marked now.', 'error'); return; }
    if (view.phase === 'marking') {  // alike loads in one quarry: marking either is the same
      var kinds = {};
      movable = movable.filter(function (i) { var k = itemWords(i); if (kinds[k]) return false; kinds[k] = true; return true; });
    }
    pick.choices = { question: 'Which one?', loads: movable, game: game };
    if (view.phase === 'reclaim' || movable.length === 1) { pick.choices = null; tapItem(game, ctx, movable[0]); return; }
    ctx.rerender();
  }

  function button(text, attrs, onclick) {
    var a = attrs || {};
    a.type = 'button';
    a.text = text;
    a.onclick = onclick;
    return el('button', a);
  }

  function loadChips(game, ctx, pred, title) {
    var view = game.view, box = el('div', { class: 'g-chips' });
    var shown = view.items.filter(pred);
    if (!shown.length) return null;
    box.appendChild(el('span', { class: 'g-chips-title', text: title }));
    shown.forEach(function (item) {
      var active = legal(game).some(function (a) { return a.action.item === item.id; });
      box.appendChild(button(itemWords(item) + (item.owner ? ' · ' + item.owner : ''), {
        class: 'chip' + (pick.load === item.id ? ' chosen' : ''), 'data-load': item.id, disabled: !active
      }, function () { tapItem(game, ctx, item); }));
    });
    return box;
  }

  function dicePanel(game, ctx) {
    var layout = game.layout, players = game.view.players.length;
    var kinds = [];
    for (var i = 0; i < 3; i++) kinds.push('white');
    for (var j = 3; j < players; j++) kinds.push('brown');
    var box = el('div', { class: 'g-dice' }, [el('p', { class: 'hint', text: 'The faces the dice show:' })]);
    kinds.forEach(function (kind, i) {
      var row = el('div', { class: 'g-die', role: 'radiogroup', 'aria-label': kind + ' die ' + (i + 1) },
        [el('span', { class: 'g-die-name ' + kind, text: kind === 'white' ? 'White' : 'Brown' })]);
      layout.dice[kind].forEach(function (face) {
        row.appendChild(button(String(face), { class: 'face' + (pick.dice[i] === face ? ' chosen' : ''),
          role: 'radio', 'aria-checked': String(pick.dice[i] === face), 'data-die': i, 'data-face': face },
        function () { pick.dice[i] = face; ctx.rerender(); }));
      });
      box.appendChild(row);
    });
    var chosen = kinds.map(function (k, i) { return pick.dice[i]; });
    var complete = chosen.every(function (d) { return d !== undefined; });
    var want = complete ? chosen.slice(0, 3).sort().concat(chosen.slice(3).sort()).join(',') : null;
    var match = ofType(game, 'roll').filter(function (a) { return a.action.dice.join(',') === want; })[0];
    box.appendChild(button(complete ? (match ? 'Enter the dice: ' + chosen.join(' ') : 'These dice cannot be rolled')
      : 'Tap a face for each die', { class: 'primary', id: 'g-roll', disabled: !match },
    function () { play(match, ctx); }));
    return box;
  }

  function bidPanel(game, ctx) {
    var bids = ofType(game, 'bid');
    var most = { markers: 0, workers: 0, sorcerer: false, chief: false };
    bids.forEach(function (a) {
      most.markers = Math.max(most.markers, a.action.markers);
      most.workers = Math.max(most.workers, a.action.workers);
      most.sorcerer = most.sorcerer || a.action.sorcerer;
      most.chief = most.chief || a.action.chief;
    });
    if (!pick.bid || pick.round !== game.to_move) {
      pick.bid = { markers: 0, workers: 0, sorcerer: false, chief: false };
      pick.round = game.to_move;
    }
    var bid = pick.bid;
    function stepper(key, word) {
      return el('div', { class: 'g-step' }, [
        el('span', { text: word }),
        button('−', { class: 'small', 'aria-label': 'fewer ' + word, 'data-step': key + '-down', disabled: bid[key] <= 0 },
          function () { bid[key] -= 1; ctx.rerender(); }),
        el('strong', { text: String(bid[key]) }),
        button('+', { class: 'small', 'aria-label': 'more ' + word, 'data-step': key + '-up', disabled: bid[key] >= most[key] },
          function () { bid[key] += 1; ctx.rerender(); })
      ]);
    }
    function toggle(key, word) {
      return el('label', { class: 'g-toggle' }, [
        el('input', { type: 'checkbox', checked: bid[key], 'data-toggle': key,
          onchange: function (e) { bid[key] = e.target.checked; ctx.rerender(); } }), ' ' + word]);
    }
    var box = el('div', { class: 'g-bid' }, [
      el('p', { class: 'hint', text: game.to_move + '’s secret bid: tribe markers in one hand, sculptors (workers, the sorcerer, the chief) in the other.' }),
      stepper('markers', 'tribe markers'), stepper('workers', 'workers')]);
    if (most.sorcerer) box.appendChild(toggle('sorcerer', 'the sorcerer (1 sculptor)'));
    if (most.chief) box.appendChild(toggle('chief', 'the chief (3 sculptors)'));
    var match = bids.filter(function (a) {
      return a.action.markers === bid.markers && a.action.workers === bid.workers
        && a.action.sorcerer === bid.sorcerer && a.action.chief === bid.chief;
    })[0];
    box.appendChild(button(match ? match.label.replace(/^[^:]*: /, '').replace(/^./, function (c) { return c.toUpperCase(); })
      : 'Not a bid ' + game.to_move + ' can make', { class: 'primary', id: 'g-bid', disabled: !match },
    function () { play(match, ctx); }));
    return box;
  }

  function listButtons(entries, ctx) {
    return entries.map(function (a) {
      return button(a.label.replace(/^[^:]*: /, '').replace(/^./, function (c) { return c.toUpperCase(); }),
        { class: 'action' }, function () { play(a, ctx); });
    });
  }

  function placePanel(game, ctx) {
    var places = ofType(game, 'place');
    var pieces = [];
    places.forEach(function (a) { if (pieces.indexOf(a.action.piece) < 0) pieces.push(a.action.piece); });
    var box = el('div', { class: 'g-place-tray' });
    box.appendChild(el('p', { class: 'hint', text: pick.piece
      ? 'Now tap the hex for the ' + pick.piece + ' (marked), or an Ahu to reserve it.'
      : 'Tap a piece, then the hex it goes to.' }));
    var row = el('div', { class: 'g-chips' });
    pieces.forEach(function (piece) {
      row.appendChild(button(PIECE_WORDS[piece], { class: 'chip' + (pick.piece === piece ? ' chosen' : ''), 'data-piece': piece },
        function () { pick.piece = pick.piece === piece ? null : piece; pick.logs = 0; pick.choices = null; ctx.rerender(); }));
    });
    box.appendChild(row);
    if (pick.piece) {
      var logs = [];
      places.forEach(function (a) {
        var n = a.action.logs || 0;
        if (a.action.piece === pick.piece && logs.indexOf(n) < 0) logs.push(n);
      });
      logs.sort();
      if (logs.length > 1) {
        var logRow = el('div', { class: 'g-chips' }, [el('span', { class: 'g-chips-title', text: 'Logs with it:' })]);
        logs.forEach(function (n) {
          logRow.appendChild(button(n ? String(n) : 'none', { class: 'chip' + (pick.logs === n ? ' chosen' : ''), 'data-logs': n },
            function () { pick.logs = n; ctx.rerender(); }));
        });
        box.appendChild(logRow);
      }
    }
    var others = el('div', { class: 'actions' }, listButtons(ofType(game, 'rongo').concat(ofType(game, 'pass')), ctx));
    box.appendChild(others);
    return box;
  }

  function transportPanel(game, ctx) {
    var view = game.view;
    var box = el('div', { class: 'g-transport' });
    var item = pick.load ? itemById(view, pick.load) : null;
    box.appendChild(el('p', { class: 'hint', text: item
      ? 'The ' + itemWords(item) + ': tap where it goes (marked hexes, or an Ahu to erect it or crown its Moai).'
      : 'Tap a Moai or headdress (on the island or below), then where it goes.' }));
    var chips = loadChips(game, ctx, function (i) { return !i.hex && !i.ahu; }, 'Before the screens:');
    if (chips) box.appendChild(chips);
    var extra = [];
    if (item) extra = ofType(game, 'mark').filter(function (a) { return a.action.item === item.id; });
    box.appendChild(el('div', { class: 'actions' }, listButtons(extra.concat(ofType(game, 'pass')), ctx)));
    return box;
  }

  function reclaimPanel(game, ctx) {
    var box = el('div', { class: 'g-reclaim' });
    box.appendChild(el('p', { class: 'hint', text: 'Tap a marked Moai or headdress to take its tribe marker back, or keep them all.' }));
    box.appendChild(el('div', { class: 'actions' }, listButtons(ofType(game, 'reclaim').concat(ofType(game, 'pass')), ctx)));
    return box;
  }

  // The marking step (end of transport): what did not move lies in its quarry; its owner may
  // mark it by a tap on it or a button, or leave it to be abandoned. Marking either of two
  // alike loads (same kind and size, same quarry) is the same, so they share a button.
  function markingPanel(game, ctx) {
    var box = el('div', { class: 'g-marking' });
    box.appendChild(el('p', { class: 'hint', text: 'End of transport: ' + game.to_move
      + ' may put a tribe marker on a Moai or headdress of theirs that did not move this turn (lit up in its quarry);'
      + ' what stays unmarked is abandoned. Tap it, or a button.' }));
    var seen = {};
    var marks = ofType(game, 'mark').filter(function (a) {
      if (seen[a.label]) return false;
      seen[a.label] = true;
      return true;
    });
    box.appendChild(el('div', { class: 'actions' }, listButtons(marks.concat(ofType(game, 'pass')), ctx)));
    return box;
  }

  function choicesPanel(ctx) {
    var c = pick.choices;
    var box = el('div', { class: 'g-choices', role: 'group', 'aria-label': c.question },
      [el('p', { class: 'g-question', text: c.question })]);
    if (c.loads) {
      c.loads.forEach(function (item) {
        box.appendChild(button(itemWords(item) + (item.owner ? ' · ' + item.owner + (item.marked ? ' (marked)' : '') : ''),
          { class: 'action', 'data-load': item.id }, function () { pick.choices = null; tapItem(c.game, ctx, item); }));
      });
    } else listButtons(c.candidates, ctx).forEach(function (b) { box.appendChild(b); });
    box.appendChild(button('Cancel', { class: 'quiet' }, function () { pick.choices = null; ctx.rerender(); }));
    return box;
  }

  function controls(game, ctx) {
    var phase = game.view.phase;
    if (phase === 'roll') return dicePanel(game, ctx);
    if (phase === 'bid') return bidPanel(game, ctx);
    if (phase === 'choose') {
      return el('div', { class: 'actions g-choose' }, listButtons(ofType(game, 'choose').concat(ofType(game, 'pass')), ctx));
    }
    if (phase === 'place') return placePanel(game, ctx);
    if (phase === 'transport') return transportPanel(game, ctx);
    if (phase === 'marking') return markingPanel(game, ctx);
    return reclaimPanel(game, ctx);
  }

  function playersTable(view) {
    var names = view.players.map(function (p) { return p.name; });
    var head = ['Player', 'Prestige', 'Rongo halves', 'Moai erected', 'Before the screen'];
    var bidsShown = view.players.some(function (p) { return p.bid; });
    if (bidsShown) head.push('Bid');
    if (view.phase === 'bid') head.push('Bid in');
    var rows = view.players.map(function (p) {
      var front = p.before_screen.map(function (id) { return itemWords(itemById(view, id)); }).join(', ');
      var row = [
        el('th', { scope: 'row' }, [el('span', { class: 'swatch', style: null, 'data-colour': colourName(names, p.name) }),
          (p.name === view.to_move ? '▶ ' : '') + p.name + (p.passed ? ' (passed)' : '')]),
        el('td', { text: String(p.prestige) }), el('td', { text: String(p.rongo_halves) }),
        el('td', { text: p.erected === null ? '?' : p.erected + ' of ' + p.bases }),
        el('td', { text: front || '–' })];
      if (bidsShown) row.push(el('td', { text: p.bid ? bidText(p.bid) : '–' }));
      if (view.phase === 'bid') row.push(el('td', { text: p.bid_in ? 'yes' : '–' }));
      return el('tr', {}, row);
    });
    return el('table', { class: 'scores facts-table g-players' }, [
      el('thead', {}, [el('tr', {}, head.map(function (h) { return el('th', { scope: 'col', text: h }); }))]),
      el('tbody', {}, rows)]);
  }

  function bidText(bid) {
    var sculptors = bid.workers + (bid.sorcerer ? 1 : 0) + (bid.chief ? 3 : 0);
    if (!bid.markers && !sculptors) return 'nothing';
    return bid.markers + ' markers, ' + sculptors + ' sculptors';
  }

  // The board card for Giants: the drawn island (tappable for the host), under it the host's
  // controls for the phase; the players' card. `ctx`: host, act(action, after), rerender().
  function render(game, ctx) {
    var view = game.view;
    var board = clear(document.getElementById('board'));
    var names = view.players.map(function (p) { return p.name; });
    document.getElementById('board-title').textContent = 'Island';
    document.getElementById('board-facts').textContent = 'round ' + view.round + ' · first player ' + view.first_player
      + (view.quarry.dice.length ? ' · dice ' + view.quarry.dice.join(' ') : '');
    var live = ctx.host && !game.over;
    pick.game = game;
    if (!live) { pick.piece = null; pick.load = null; pick.choices = null; pick.helping = null; }
    if (pick.load && !itemById(view, pick.load)) pick.load = null;
    var targets = live ? targetsFor(game) : null;
    if (live) {
      board.appendChild(el('div', { id: 'giants-controls', class: 'g-controls' }, [controls(game, ctx)]));
      if (pick.helping) board.appendChild(helpPanel(ctx));
      else if (pick.choices) board.appendChild(choicesPanel(ctx));
    }
    board.appendChild(drawIsland(view.island, game.layout, {
      names: names, items: view.items, targets: targets, chosen: live ? pick.load : null,
      onHex: live ? function (hx) { tapHex(game, ctx, hx); } : null,
      onAhu: live ? function (a) { tapAhu(game, ctx, a); } : null,
      onItem: live ? function (item) { tapItem(game, ctx, item); } : null,
      onPile: live ? function (items) { tapPile(game, ctx, items); } : null,
      label: live ? 'The island: tap a piece or load, then where it goes' : 'The island'
    }));
    board.appendChild(legend(names));
    var quarry = [];
    if (view.quarry.moai.length) quarry.push('Moai in the quarry, sizes ' + view.quarry.moai.join(', '));
    if (view.quarry.broken) quarry.push(view.quarry.broken + ' broken');
    quarry.push('in the box: Moai ' + view.supply.moai.join(' / ') + ' (sizes 1 / 2 / 3), '
      + view.supply.headdresses + ' headdresses, ' + view.supply.logs + ' logs, ' + view.supply.rongo_halves + ' Rongo halves');
    board.appendChild(el('p', { class: 'hint', text: quarry.join(' · ') }));
    var players = clear(document.getElementById('players'));
    players.appendChild(playersTable(view));
  }

  function legend(names) {
    return el('p', { class: 'g-legend' }, names.map(function (n) {
      return el('span', { class: 'g-legend-item' }, [el('span', { class: 'swatch', 'data-colour': colourName(names, n) }), n]);
    }).concat([el('span', { class: 'g-legend-item', text: '● worker ▲ sorcerer ■ chief · Ahu: black × size, red for a headdress' })]));
  }

  function reset() { pick = { piece: null, logs: 0, load: null, dice: [], bid: null, round: null, choices: null, helping: null }; }

  window.CompanionGiants = {
    render: render, drawIsland: drawIsland, reset: reset, COLOURS: COLOURS, COLOUR_NAMES: COLOUR_NAMES,
    colourName: colourName
  };
})();
