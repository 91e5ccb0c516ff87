"""Giants on the phones in the game's own words: where each Ahu is drawn, what each hex is
called, and every action said as a player would say it, never by its ids (h01, a01, moai3).

The island comes from the game (its setup carries it, `companion/games/giants/island.toml` by
default); the pages draw it from `layout(island)` beside `GiantsGame.view()`.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from companion.games.giants.game import GiantsGame
from companion.games.giants.island import Island

#: The six directions of a pointy-topped hex's edges, clockwise from east: (dq, dr), name.
EDGES = (
    ((1, 0), "east"),
    ((0, 1), "south-east"),
    ((-1, 1), "south-west"),
    ((-1, 0), "west"),
    ((0, -1), "north-west"),
    ((1, -1), "north-east"),
)
COMPASS = ("east", "south-east", "south", "south-west", "west", "north-west", "north", "north-east")
#: What each special hex is called (the rulebook's places).
PLACES = {
    "village": "the village",
    "hut": "the sorcerer's hut",
    "moai_quarry": "the Moai quarry",
    "headdress_quarry": "the headdress quarry",
}
#: The Rongo tablets the chief breaks, in order (a reservation each).
ORDER = ("first", "second", "third", "fourth")
#: A piece as the rulebook names it.
PIECES = {"worker": "a worker", "sorcerer": "the sorcerer", "chief": "the chief"}


def _centre(q: int, r: int) -> tuple[float, float]:
    return math.sqrt(3) * (q + r / 2), 1.5 * r


def _compass(dx: float, dy: float) -> str:
    """One of eight compass words for a direction on the drawn island (y grows southwards)."""
    return COMPASS[round(math.degrees(math.atan2(dy, dx)) / 45) % 8]


def _ahu_edges(island: Island) -> dict[str, tuple[int, float]]:
    """Each Ahu's edge of its hex (0-5 clockwise from east) and its place along that edge
    (-1 to 1): on the sea side, spread out when a hex touches two Ahus."""
    at = {(h.q, h.r) for h in island.hexes}
    out: dict[str, tuple[int, float]] = {}
    for h in island.hexes:
        ahus = island.ahus_at[h.id]
        if not ahus:
            continue
        sea = [k for k, ((dq, dr), _) in enumerate(EDGES) if (h.q + dq, h.r + dr) not in at]
        if not sea:
            sea = [0]
        # Start the list just after a land edge, so that neighbouring sea edges stay together.
        land = [k for k in range(6) if k not in sea]
        if land:
            first = (land[0] + 1) % 6
            sea.sort(key=lambda k: (k - first) % 6)
        n = len(ahus)
        last = len(sea) - 1
        chosen = [sea[min(last, max(0, round((i + 0.5) * len(sea) / n - 0.5)))] for i in range(n)]
        for i, ahu in enumerate(ahus):
            sharing = [j for j in range(n) if chosen[j] == chosen[i]]
            along = 0.0 if len(sharing) == 1 else -0.5 + sharing.index(i) / (len(sharing) - 1)
            out[ahu] = (chosen[i], along)
    return out


def _positions(
    island: Island, edges: dict[str, tuple[int, float]]
) -> dict[str, tuple[float, float]]:
    """Where each hex and Ahu is drawn (hex widths from the island's middle)."""
    out = {h.id: _centre(h.q, h.r) for h in island.hexes}
    cx = sum(x for x, _ in out.values()) / len(out)
    cy = sum(y for _, y in out.values()) / len(out)
    for a in island.ahus:
        x, y = out[a.hex]
        angle = math.radians(60 * edges[a.id][0])
        out[a.id] = (x + math.cos(angle), y + math.sin(angle))
    return {k: (x - cx, y - cy) for k, (x, y) in out.items()}


def _distinct(base: dict[str, str], where: dict[str, tuple[float, float]]) -> dict[str, str]:
    """The names in `base`, those that several things share told apart by where they lie:
    first the part of the island, then their order from west to east (or north to south)."""
    names = dict(base)
    for step in range(2):
        groups: dict[str, list[str]] = {}
        for key, name in names.items():
            groups.setdefault(name, []).append(key)
        for name, keys in groups.items():
            if len(keys) < 2:
                continue
            if step == 0:
                for k in keys:
                    x, y = where[k]
                    part = "the middle" if math.hypot(x, y) < 1.2 else f"the {_compass(x, y)}"
                    names[k] = f"{name} in {part}"
                continue
            xs = [where[k][0] for k in keys]
            ys = [where[k][1] for k in keys]
            across = max(xs) - min(xs) >= max(ys) - min(ys)
            order = sorted(keys, key=lambda k: where[k][0] if across else where[k][1])
            words = ("western", "eastern") if across else ("northern", "southern")
            for i, k in enumerate(order):
                if len(keys) == 2:
                    names[k] = f"{name}, {words[i]}"
                else:
                    side = "west" if across else "north"
                    names[k] = f"{name}, {_ordinal(i + 1)} from the {side}"
    return names


def _ordinal(n: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")


@lru_cache(maxsize=8)
def layout(island: Island) -> dict[str, Any]:
    """What the pages need beside the view to draw and name the island: each hex's name and
    each Ahu's name, edge (0-5 clockwise from east) and place along it (-1 to 1):
    `{"dice": {"white", "brown"}, "hexes": {id: {"name"}}, "ahus": {id: {"name", "edge",
    "along"}}}` (the dice's different faces, for the host's dice pickers). Every name is
    different; none is an id."""
    edges = _ahu_edges(island)
    where = _positions(island, edges)
    ahu_names = _distinct({a.id: f"Ahu {a.value}·{a.headdress}" for a in island.ahus}, where)
    base = {}
    for h in island.hexes:
        ahus = island.ahus_at[h.id]
        if h.kind in PLACES:
            base[h.id] = PLACES[h.kind]
        elif ahus:
            base[h.id] = f"the coast by {ahu_names[ahus[0]]}"
        else:
            what = "the forest" if h.kind == "forest" else "the hex"
            near = _beside(island, h.id)
            base[h.id] = f"{what} {near}" if near else what
    hex_names = _distinct(base, where)
    return {
        "dice": {"white": sorted(set(island.white)), "brown": sorted(set(island.brown))},
        "hexes": {h.id: {"name": hex_names[h.id]} for h in island.hexes},
        "ahus": {
            a.id: {"name": ahu_names[a.id], "edge": edges[a.id][0], "along": edges[a.id][1]}
            for a in island.ahus
        },
    }


def _beside(island: Island, hex_id: str) -> str | None:
    """'east of the village' for a hex beside one of the one-of-a-kind places."""
    h = island.hex_by_id[hex_id]
    for kind, place in PLACES.items():
        other = island.hex_by_id[island.only(kind)]
        for (dq, dr), word in EDGES:
            if (other.q + dq, other.r + dr) == (h.q, h.r):
                return f"{word} of {place}"
    return None


def help_choices(game: GiantsGame, actions: list[dict[str, Any]]) -> dict[str, Any]:
    """For each legal move (by its index in `actions`) whose mover may choose who gets the
    points ("darà i punti prestigio al giocatore di sua scelta"): per hex entered, every way
    to give them (`GiantsGame.help_ways`), with the hex's name. Moves with one way only are
    left out (the engine records that way)."""
    if game.state.phase != "transport":
        return {}
    names = layout(game.island)["hexes"]
    out: dict[str, Any] = {}
    for index, data in enumerate(actions):
        if data.get("type") != "move" or not data.get("path"):
            continue
        ways = game.help_ways(str(data["item"]), data["path"])
        if any(len(step) > 1 for step in ways):
            out[str(index)] = [
                {"hex": names[hex_id]["name"], "ways": step}
                for hex_id, step in zip(data["path"], ways, strict=True)
            ]
    return out


def item_words(game: GiantsGame, item_id: str) -> str:
    """'the Moai of size 2' or 'the headdress'."""
    item = game.state.items.get(item_id)
    if item is None:
        return "a Moai or headdress"
    return f"the Moai of size {item.size}" if item.kind == "moai" else "the headdress"


def _place_words(game: GiantsGame, data: dict[str, Any]) -> str:
    names = layout(game.island)
    hex_id = str(data.get("hex"))
    where = names["hexes"].get(hex_id, {}).get("name", "a hex")
    text = f"{PIECES.get(str(data.get('piece')), 'a piece')} on {where}"
    logs = data.get("logs") or 0
    if logs:
        text += f" with {logs} log" + ("s" if logs > 1 else "")
    if not data.get("power"):
        return text
    h = game.island.hex_by_id.get(hex_id)
    kind = h.kind if h else ""
    if kind == "village":
        power = "a worker from the container"
    elif kind == "hut":
        power = "a tribe marker from the container"
    elif kind == "forest" and h is not None:
        power = "the forest's logs"
    elif kind == "headdress_quarry":
        power = "a headdress sculpted"
    else:
        ahu = names["ahus"].get(str(data.get("ahu")), {}).get("name", "an Ahu")
        power = f"{ahu} reserved"
    if data.get("piece") != "chief":
        return f"{text}, using its power: {power}"
    tablets = data.get("tablets") or 1
    if tablets == 1:
        return f"{text}, using its power breaking a Rongo tablet: {power}"
    times = {2: "twice", 3: "three times"}.get(tablets, f"{tablets} times")
    return f"{text}, using its power {times}, breaking {tablets} Rongo tablets: " + (
        _powers(game, kind, hex_id, data, tablets) or power
    )


def _powers(
    game: GiantsGame, kind: str, hex_id: str, data: dict[str, Any], tablets: int
) -> str | None:
    """What the chief's power brings when it breaks `tablets` Rongo tablets (rulebook line 251:
    one action of the hex per tablet; a second reservation takes the hex's other free Ahu);
    None where the hex has no action to repeat."""
    each = {
        "village": "workers from the container",
        "hut": "tribe markers from the container",
        "headdress_quarry": "headdresses sculpted",
    }
    if kind in each:
        return f"{tablets} {each[kind]}, one for each tablet"
    if not game.island.ahus_at.get(hex_id):
        return None
    names = layout(game.island)["ahus"]
    first = str(data.get("ahu"))
    others = [
        a
        for a in game.island.ahus_at.get(hex_id, [])
        if a != first and game.state.ahus[a].base is None
    ]
    chosen = [names.get(a, {}).get("name", "an Ahu") for a in [first, *others][:tablets]]
    return "; ".join(
        f"the {ORDER[i] if i < len(ORDER) else _ordinal(i + 1)} reserves {name}"
        for i, name in enumerate(chosen)
    )


def _move_words(game: GiantsGame, data: dict[str, Any]) -> str:
    names = layout(game.island)
    what = item_words(game, str(data.get("item")))
    path = [str(h) for h in data.get("path") or []]
    ahu = names["ahus"].get(str(data.get("erect") or data.get("cap")), {}).get("name", "an Ahu")
    if data.get("erect"):
        verb, end = "erect", f" on {ahu}"
    elif data.get("cap"):
        verb, end = "set", f" on the Moai of {ahu}"
    elif data.get("mark"):
        verb, end = "mark", ""
    else:
        verb, end = "leave", ""
    if not path:
        text = f"{verb} {what}{end or ' where it stands'}"
    else:
        where = names["hexes"].get(path[-1], {}).get("name", "a hex")
        steps = f"{len(path)} hex" + ("es" if len(path) > 1 else "")
        text = f"move {what} to {where} ({steps})"
        if verb != "leave":
            text += f" and {verb} it{end}"
    given: dict[str, int] = {}
    for step in data.get("help") or []:
        for name, points in step.items():
            given[name] = given.get(name, 0) + int(points)
    if given:
        text += "; points to " + ", ".join(f"{n} {p}" for n, p in given.items())
    return text


def _bid_words(data: dict[str, Any]) -> str:
    markers, workers = int(data.get("markers") or 0), int(data.get("workers") or 0)
    hands = []
    if markers:
        hands.append(f"{markers} tribe marker" + ("s" if markers > 1 else ""))
    sculptors = [f"{workers} worker" + ("s" if workers > 1 else "")] if workers else []
    if data.get("sorcerer"):
        sculptors.append("the sorcerer")
    if data.get("chief"):
        sculptors.append("the chief")
    if sculptors:
        count = workers + int(bool(data.get("sorcerer"))) + 3 * int(bool(data.get("chief")))
        hands.append(" and ".join(sculptors) + f" as {count} sculptor" + ("s" if count > 1 else ""))
    return "Bid " + (" and ".join(hands) if hands else "nothing")


def action_words(game: GiantsGame, data: dict[str, Any], phase: str | None = None) -> str:
    """An action in words, for a button, a toast or the move list: 'Ana: place a worker on
    the village', 'Ben: bid nothing', 'Cy: the Moai of size 2 to ..., erected on Ahu 9·4'.
    `phase` (the game's phase when the action is offered) says what a pass gives up."""
    kind = data.get("type")
    who = str(data.get("player", ""))
    if kind == "roll":
        text = "the dice show " + " ".join(str(d) for d in data.get("dice", []))
    elif kind == "bid":
        text = _bid_words(data)
    elif kind == "choose":
        text = f"Take the Moai of size {data.get('size')}"
    elif kind == "place":
        text = "Place " + _place_words(game, data)
    elif kind == "rongo":
        text = "Take a Rongo half-tablet (a tribe marker before the screen)"
    elif kind == "move":
        text = _move_words(game, data)
    elif kind == "mark":
        text = _mark_words(game, str(data.get("item")), phase)
    elif kind == "reclaim":
        text = f"Take the tribe marker back from {item_words(game, str(data.get('item')))}"
    elif kind == "pass":
        text = _pass_words(game, who, phase)
    else:
        text = str(kind)
    return f"{who}: {text[0].lower()}{text[1:]}" if who else text


def _mark_words(game: GiantsGame, item_id: str, phase: str | None) -> str:
    """In the marking step the load lies in its quarry (rulebook line 366); marked, it stays
    its owner's, unmarked it is abandoned."""
    what = item_words(game, item_id)
    item = game.state.items.get(item_id)
    if phase != "marking" or item is None or item.hex is None:
        return f"Mark {what} where it stands"
    where = layout(game.island)["hexes"].get(item.hex, {}).get("name", "its quarry")
    return f"Mark {what} in {where}, keeping it"


def _pass_words(game: GiantsGame, who: str, phase: str | None) -> str:
    """What a pass gives up in `phase`. While placing, a player with a worker, the sorcerer or
    the chief still behind the screen is asked again after someone else places (line 259)."""
    if phase == "place":
        clan = next((c for c in game.state.clans if c.name == who), None)
        if clan is not None and (clan.free_workers > 0 or clan.sorcerer or clan.chief):
            return (
                "pass for now: asked again if another player places a piece "
                "or takes a Rongo half-tablet"
            )
        return "pass: nothing more in this turn's placing"
    return {
        "choose": "take no Moai",
        "transport": "pass: move nothing more this turn",
        "marking": "leave what did not move unmarked: abandoned in its quarry, anyone's to take",
        "reclaim": "keep every tribe marker where it is",
    }.get(phase or "", "pass")
