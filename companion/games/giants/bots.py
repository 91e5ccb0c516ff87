"""A seeded bot that plays Giants through `legal_actions` and `push`, for demos and tests.

It rolls the dice, bids for one Moai it can sculpt, places pieces along the shortest road from
its Moai to a free Ahu, and in transport erects, covers or moves closer whenever it can.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from companion.games.giants import rules
from companion.games.giants.actions import (
    Action,
    Bid,
    Choose,
    Mark,
    Move,
    Pass,
    Place,
    Reclaim,
    TakeRongo,
)
from companion.games.giants.game import GiantsGame
from companion.games.giants.state import Item


def play_random_game(names: Sequence[str], seed: int, *, max_actions: int = 50_000) -> GiantsGame:
    """A whole game between bots, the same for the same names and seed."""
    rng = random.Random(seed)
    game = GiantsGame.new(names, seed)
    for _ in range(max_actions):
        if game.over:
            return game
        game.push(choose_action(game, rng))
    raise RuntimeError(f"The bots did not finish a game in {max_actions} actions.")


def choose_action(game: GiantsGame, rng: random.Random) -> Action:
    """The bot's pick for the player to move."""
    phase = game.state.phase
    if phase == "roll":
        return game.roll(rng)
    legal = rules.legal_actions(game.state, game.island)
    if phase == "bid":
        return _bid(game, legal, rng)
    if phase == "choose":
        chosen = [a for a in legal if isinstance(a, Choose)]
        return max(chosen, key=lambda a: a.size) if chosen else legal[-1]
    if phase == "place":
        return _place(game, legal, rng)
    if phase == "transport":
        return _transport(game, legal, rng)
    if phase == "marking":
        marks = [a for a in legal if isinstance(a, Mark)]
        return marks[0] if marks and rng.random() < 0.8 else legal[-1]
    reclaim = [a for a in legal if isinstance(a, Reclaim)]
    return rng.choice(reclaim) if reclaim and rng.random() < 0.1 else legal[-1]


def _bid(game: GiantsGame, legal: list[Action], rng: random.Random) -> Action:
    bids = [a for a in legal if isinstance(a, Bid)]
    quarry = game.state.quarry
    target = rng.choice(quarry) if quarry and rng.random() < 0.8 else 0
    fitting = [b for b in bids if b.sculptors == target and b.markers <= 2] or [
        b for b in bids if b.sculptors == 0
    ]
    # Keep the chief for transport unless a size 3 is wanted.
    fitting = [b for b in fitting if not b.chief] or fitting
    return rng.choice(fitting)


def _usable_hexes(game: GiantsGame, name: str) -> set[str]:
    """Hexes that touch an Ahu this clan could erect a Moai on."""
    s = game.state
    clan = s.clan(name)
    out = set()
    for a in game.island.ahus:
        spot = s.ahus[a.id]
        if spot.moai is None and (spot.base == name or (spot.base is None and clan.bases > 0)):
            out.add(a.hex)
    return out


def _cover_hexes(game: GiantsGame, name: str) -> set[str]:
    """Hexes that touch one of this clan's Moai still without a headdress."""
    return {
        a.hex
        for a in game.island.ahus
        if game.state.ahus[a.id].base == name
        and game.state.ahus[a.id].moai is not None
        and game.state.ahus[a.id].headdress is None
    }


def _targets(game: GiantsGame, item: Item, name: str) -> set[str]:
    if item.kind == "moai":
        return _usable_hexes(game, name)
    return _cover_hexes(game, name)


def _road(game: GiantsGame, item: Item, name: str) -> list[str]:
    """The hexes a load of ours must enter to reach the nearest place it can stand (fewest
    hexes): a free Ahu for a Moai, one of our bare Moai for a headdress."""
    targets = _targets(game, item, name)
    if not targets:
        return []
    dist = game.island.distances(targets)
    here = rules.start_of(game.island, item)
    if here not in dist:
        return []
    road = []
    while dist[here] > 0:
        here = min(
            (h for h in game.island.neighbours[here] if h in dist),
            key=lambda h: (dist[h], h),
        )
        road.append(here)
    return road


def _place(game: GiantsGame, legal: list[Action], rng: random.Random) -> Action:
    s = game.state
    name = game.to_move() or ""
    clan = s.clan(name)
    places = [a for a in legal if isinstance(a, Place)]
    mine = [i for i in s.items.values() if i.owner == name and i.ahu is None and i.kind == "moai"]
    for item in sorted(mine, key=lambda i: -i.size):
        road = _road(game, item, name)
        for k, h in enumerate(road):
            last = k == len(road) - 1
            needs_help = rules.help_options(s, h, name, item.size) != [()]
            present = rules._presence(s, h, name)
            if not needs_help and not (last and not present):
                continue
            want = [a for a in places if a.hex == h and not a.power]
            if item.size >= 2 and needs_help:
                chief = [a for a in want if a.piece == "chief"]
                logged = [a for a in want if a.piece != "chief" and a.logs >= item.size - 1]
                want = chief or logged or want
            if want:
                return rng.choice(want)
            break
    powers = [a for a in places if a.power]
    sculpt = [a for a in powers if a.hex == game.island.only("headdress_quarry")]
    if sculpt and _cover_hexes(game, name) and rng.random() < 0.7:
        return rng.choice(sculpt)
    if powers and rng.random() < 0.6:
        return rng.choice(powers)
    if clan.free_markers > 1 and rng.random() < 0.3:
        rongo = [a for a in legal if isinstance(a, TakeRongo)]
        if rongo:
            return rongo[0]
    if places and rng.random() < 0.3:
        return rng.choice(places)
    return legal[-1]


def _transport(game: GiantsGame, legal: list[Action], rng: random.Random) -> Action:
    s = game.state
    name = game.to_move() or ""
    moves = [a for a in legal if isinstance(a, Move)]
    erect = [a for a in moves if a.erect is not None]
    if erect:
        return max(erect, key=lambda a: (game.island.ahu_by_id[a.erect or ""].value, a.item))
    cap = [a for a in moves if a.cap is not None]
    if cap:
        return rng.choice(cap)
    dists = {
        "moai": game.island.distances(_usable_hexes(game, name)),
        "headdress": game.island.distances(_cover_hexes(game, name)),
    }
    far = len(game.island.hexes)
    closer = []
    for a in moves:
        item = s.items[a.item]
        if not a.path:
            continue
        dist = dists[item.kind]
        gain = dist.get(rules.start_of(game.island, item), far) - dist.get(a.path[-1], far)
        if gain > 0 and (item.owner == name or a.mark):
            closer.append((gain, a.mark, a))
    if closer:
        best = max(g for g, _, _ in closer)
        return rng.choice(
            [
                a
                for g, marked, a in closer
                if g == best and (marked or not any(m for gg, m, _ in closer if gg == best))
            ]
        )
    marks = [a for a in legal if isinstance(a, Mark) and s.items[a.item].owner == name]
    if marks:
        return rng.choice(marks)
    return next(a for a in legal if isinstance(a, Pass))
