/* A board game's score as a table (companion.games.base.ScoreTable's JSON): the points rows
 * that add up, the total, then the counts that break ties, apart and named so. The same rows in
 * the same order wherever a score is drawn (the games page, fresh or live, and Tongiaki's final
 * count). Vanilla JS, nothing from the internet. */
(function () {
  'use strict';

  var common = window.CompanionCommon;
  var el = common.el;

  // Row names a game's own words give better than its keys.
  var LABELS = {
    tongiaki: {
      island_points: 'Island points', royal_island_points: 'Royal island points',
      islands: 'Islands (more wins)', boats: 'Boats on the map (fewer wins)'
    }
  };

  function words(key) { return key.replace(/_/g, ' ').replace(/^./, function (c) { return c.toUpperCase(); }); }

  // The breakdown rows: the score's own `rows`, or every key as it first comes.
  function layout(score) {
    if (score.rows) return { points: score.rows.points, tiebreaks: score.rows.tiebreaks };
    var points = [];
    score.players.forEach(function (p) {
      Object.keys(p).forEach(function (key) {
        if (key !== 'name' && key !== 'total' && points.indexOf(key) < 0) points.push(key);
      });
    });
    return { points: points, tiebreaks: [] };
  }

  // `final`: the game is over (the winners starred); otherwise the leaders are shaded.
  function table(score, final) {
    var players = score.players;
    var labels = LABELS[score.game] || {};
    var top = Math.max.apply(null, players.map(function (p) { return p.total; }));
    var leaders = score.winners && score.winners.length ? score.winners : null;
    function lead(p) { return leaders ? leaders.indexOf(p.name) >= 0 : (!final && p.total === top); }
    function label(key) { return labels[key] || words(key); }
    function row(key, cls) {
      return el('tr', { class: cls || null, 'data-row': key }, [el('th', { scope: 'row', text: label(key) })].concat(
        players.map(function (p) {
          return el('td', { class: lead(p) ? 'lead' : '', text: String(p[key] === undefined ? '' : p[key]) });
        })));
    }
    var rows = layout(score);
    var result = el('table', { class: 'scores' + (final ? ' final-table' : '') });
    result.appendChild(el('thead', {}, [el('tr', {}, [el('th', { scope: 'col', text: '' })].concat(
      players.map(function (p) {
        return el('th', { scope: 'col', class: lead(p) ? 'lead' : '',
          text: (final && lead(p) ? '★ ' : '') + p.name });
      })))]));
    var body = el('tbody');
    rows.points.forEach(function (key) { body.appendChild(row(key)); });
    body.appendChild(el('tr', { class: 'total', 'data-row': 'total' }, [el('th', { scope: 'row', text: 'Total' })].concat(
      players.map(function (p) { return el('td', { class: lead(p) ? 'lead' : '', text: String(p.total) }); }))));
    result.appendChild(body);
    if (rows.tiebreaks.length) {
      var ties = el('tbody', { class: 'tiebreaks' }, [el('tr', {}, [el('th', {
        scope: 'rowgroup', colspan: players.length + 1, class: 'tiebreak-head',
        text: 'Tie-breaks, in this order (counts, not points)' })])]);
      rows.tiebreaks.forEach(function (key) { ties.appendChild(row(key, 'tiebreak')); });
      result.appendChild(ties);
    }
    return result;
  }

  window.CompanionScores = { table: table, layout: layout };
})();
