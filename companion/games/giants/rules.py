"""The rules: what each action does to the state, its one-sentence refusals, and the next turn.

`apply` mutates the state it is given and raises IllegalMove before changing anything it
refuses; the caller hands it a copy (game.py), so a refusal half-way never leaks out.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator

from companion.errors import GameOver, IllegalMove
from companion.games.giants.actions import (
    Action,
    Bid,
    Choose,
    Mark,
    Move,
    Pass,
    Place,
    Reclaim,
    Roll,
    TakeRongo,
    Way,
)
from companion.games.giants.island import Island
from companion.games.giants.state import BASES, START_MARKERS, AhuState, Clan, Item, Piece, State

# --- dice ------------------------------------------------------------------------------------


def dice_faces(island: Island, players: int) -> list[tuple[int, ...]]:
    """Each die's faces: 3 white dice, one brown die more with 4 players, both with 5."""
    return [island.white] * 3 + [island.brown] * (players - 3)


def quarry_size(face: int, round_number: int) -> int:
    """The Moai size a face shows; in the first turn 0 counts as 1 and 3 as 2."""
    if round_number == 1:
        return {0: 1, 3: 2}.get(face, face)
    return face


# --- transport capacity and prestige ------------------------------------------------------------


def help_options(state: State, hex_id: str, mover: str, size: int) -> list[Way] | None:
    """The ways for `mover` to carry a load of `size` into `hex_id`, cheapest first.

    Each way is ((name, points), ...) for the other clans whose pieces are used; None: the
    pieces there cannot carry it. Own pieces and logs are used first and give no one points;
    the mover then chooses whose pieces help ("darà i punti prestigio al giocatore di sua
    scelta"): any set of them that carries the load with no piece to spare. Each other clan's
    worker (or unpowered sorcerer) used gives its owner 1 point, a chief gives the load's size
    ("Quando un Capo trasporta un Moai di taglia 2, guadagna 2 PP").
    """
    own_workers = 0
    own_chief = False
    workers: dict[str, int] = {}
    chiefs: list[str] = []
    for p in state.pieces.get(hex_id, []):
        if p.powered:
            continue
        if p.owner == mover:
            if p.piece == "chief":
                own_chief = True
            else:
                own_workers += 1
        elif p.piece == "chief":
            chiefs.append(p.owner)
        else:
            workers[p.owner] = workers.get(p.owner, 0) + 1
    if own_chief:
        return [()]
    logs = state.board_logs.get(hex_id, 0)
    # Logs count as workers, but never without at least one worker.
    need = max(size - own_workers - logs, 1 - own_workers, 0)
    if need == 0:
        return [()]
    turn = _left_of(state, mover)
    ways: list[Way] = []
    if sum(workers.values()) >= need:
        names = [n for n in turn if n in workers]
        for split in _splits(need, [workers[n] for n in names]):
            ways.append(tuple(sorted((n, k) for n, k in zip(names, split, strict=True) if k)))
    ways += [((n, size),) for n in turn if n in chiefs]
    if not ways:
        return None
    # One entry per distinct gift of points (a chief may give what a worker gives).
    return sorted(dict.fromkeys(ways), key=help_cost)


def _left_of(state: State, name: str) -> list[str]:
    i = state.index(name)
    n = len(state.clans)
    return [state.clans[(i + k) % n].name for k in range(1, n)]


def _splits(total: int, caps: list[int]) -> Iterator[tuple[int, ...]]:
    """Ways to take `total` pieces from piles of sizes `caps`, first piles first."""
    if not caps:
        if total == 0:
            yield ()
        return
    for k in range(min(total, caps[0]), -1, -1):
        for rest in _splits(total - k, caps[1:]):
            yield (k, *rest)


def help_cost(way: Way) -> int:
    return sum(points for _, points in way)


# --- the turn's order ----------------------------------------------------------------------------


def to_move(state: State) -> str | None:
    return None if state.over or state.turn is None else state.clans[state.turn].name


def _ring(state: State) -> list[int]:
    return state.priority if state.phase == "choose" else state.order()


def advance(state: State, island: Island, after: int | None) -> None:
    """Hand the turn to the next clan that can act in this phase, or end the phase."""
    ring = _ring(state)
    start = ring.index(after) + 1 if after is not None and after in ring else 0
    for k in range(len(ring)):
        i = ring[(start + k) % len(ring)]
        clan = state.clans[i]
        if not clan.done and not clan.waiting and _can_act(state, island, i):
            state.turn = i
            return
    _end_phase(state, island)


def _can_act(state: State, island: Island, i: int) -> bool:
    clan = state.clans[i]
    if state.phase == "choose":
        return any(size <= clan.sculptors for size in state.quarry)
    if state.phase == "place":
        return (
            clan.free_workers > 0
            or clan.sorcerer
            or clan.chief
            or (clan.free_markers > 0 and state.rongo > 0)
        )
    if state.phase == "transport":
        return any(not isinstance(a, Pass) for a in transport_actions(state, island, clan.name))
    if state.phase == "marking":
        return clan.free_markers > 0 and any(
            state.items[k].owner == clan.name for k in state.unmoved
        )
    if state.phase == "reclaim":
        return any(it.marked and it.owner == clan.name for it in state.items.values())
    return False


def _start_phase(state: State, island: Island, phase: str) -> None:
    state.phase = phase
    for clan in state.clans:
        clan.done = clan.waiting = False
    advance(state, island, None)


def _end_phase(state: State, island: Island) -> None:
    if state.phase == "choose":
        state.quarry = []  # Moai nobody could sculpt leave the game
        _start_phase(state, island, "place")
    elif state.phase == "place":
        _start_phase(state, island, "transport")
    elif state.phase == "transport":
        _end_transport(state, island)
    elif state.phase == "marking":
        _abandon(state)
        _start_phase(state, island, "reclaim")
    elif state.phase == "reclaim":
        _new_turn(state, island)


def _end_transport(state: State, island: Island) -> None:
    """Unmoved loads go to their quarry; the game ends, or their owners may mark them
    ("Il Giocatore può immediatamente marchiarlo"), then the unmarked ones are abandoned."""
    state.unmoved = []
    for item in state.items.values():
        if item.ahu is None and item.hex is None:  # won or sculpted this turn and never moved
            kind = "moai_quarry" if item.kind == "moai" else "headdress_quarry"
            item.hex = island.only(kind)
            state.unmoved.append(item.id)
    bases = bases_per_clan(state)
    full = any(c.erected == bases for c in state.clans)
    unerected = any(it.kind == "moai" and it.ahu is None for it in state.items.values())
    stalled = sum(state.stock) == 0 and (not unerected or (state.dry and not state.moved))
    if full or stalled:
        _abandon(state)
        state.over = True
        state.phase = "over"
        state.turn = None
        return
    _start_phase(state, island, "marking")


def _abandon(state: State) -> None:
    """Every unmarked Moai and headdress off the Ahus becomes anyone's to take."""
    state.unmoved = []
    for item in state.items.values():
        if item.ahu is None and not item.marked:
            item.owner = None


def bases_per_clan(state: State) -> int:
    return BASES[len(state.clans)]


def _new_turn(state: State, island: Island) -> None:
    state.pieces = {}
    state.board_logs = {}  # logs put on the island leave the game
    for clan in state.clans:
        clan.free_workers = clan.workers
        clan.sorcerer = clan.chief = True
        marked = sum(1 for it in state.items.values() if it.marked and it.owner == clan.name)
        clan.free_markers = clan.markers - marked
        clan.bid = None
        clan.sculptors = 0
        clan.done = False
    for item in state.items.values():
        item.trail = []
    state.round += 1
    state.first = (state.first + 1) % len(state.clans)
    state.phase = "roll"
    state.turn = state.first
    state.dice = ()
    state.broken = 0
    state.priority = []
    state.moved = False


# --- applying actions ---------------------------------------------------------------------------


def apply(state: State, island: Island, action: Action) -> Action:
    """Play `action`; returns it as recorded (a move's help filled in). Refusals raise first."""
    if state.over:
        raise GameOver("The game is over.")
    if not any(c.name == action.player for c in state.clans):
        raise IllegalMove(f"{action.player} does not play in this game.")
    who = state.index(action.player)
    clan = state.clans[who]
    if isinstance(action, Bid):
        if state.phase != "bid":
            raise IllegalMove("Bids are made in the auction, after the dice are rolled.")
        _bid(state, island, clan, action)
        return action
    if state.turn != who:
        raise IllegalMove(f"It is {to_move(state)}'s turn, not {action.player}'s.")
    if isinstance(action, Roll):
        _roll(state, island, action)
    elif isinstance(action, Choose):
        _choose(state, island, clan, action)
    elif isinstance(action, Place):
        _place(state, island, clan, action)
    elif isinstance(action, TakeRongo):
        _take_rongo(state, island, clan)
    elif isinstance(action, Move):
        action = _move(state, island, clan, action)
    elif isinstance(action, Mark):
        _mark(state, island, clan, action)
    elif isinstance(action, Reclaim):
        _reclaim(state, island, clan, action)
    else:
        _pass(state, island, clan)
    return action


def _roll(state: State, island: Island, action: Roll) -> None:
    if state.phase != "roll":
        raise IllegalMove("The dice are rolled at the start of a turn.")
    faces = dice_faces(island, len(state.clans))
    if len(action.dice) != len(faces):
        raise IllegalMove(f"This game rolls {len(faces)} dice, not {len(action.dice)}.")
    for k, (face, die) in enumerate(zip(action.dice, faces, strict=True)):
        if face not in die:
            colour = "white" if k < 3 else "brown"
            raise IllegalMove(f"A {colour} die has no face {face}.")
    state.dice = action.dice
    state.dry = sum(state.stock) == 0
    state.quarry = []
    state.broken = 0
    for face in action.dice:
        size = quarry_size(face, state.round)
        if size == 0:
            continue
        if state.stock[size - 1] > 0:
            state.stock[size - 1] -= 1
            state.quarry.append(size)
        else:
            state.broken += 1
    state.quarry.sort()
    state.phase = "bid"
    state.turn = state.first


def _bid(state: State, island: Island, clan: Clan, bid: Bid) -> None:
    if clan.bid is not None:
        raise IllegalMove(f"{clan.name} has already bid this turn.")
    if bid.markers > clan.free_markers:
        raise IllegalMove(f"{clan.name} has only {clan.free_markers} tribe markers to bid.")
    if bid.workers > clan.free_workers:
        raise IllegalMove(f"{clan.name} has only {clan.free_workers} workers to bid.")
    clan.bid = bid
    clan.free_markers -= bid.markers
    clan.free_workers -= bid.workers
    clan.sorcerer = clan.sorcerer and not bid.sorcerer
    clan.chief = clan.chief and not bid.chief
    clan.sculptors = bid.sculptors
    waiting = [i for i in state.order() if state.clans[i].bid is None]
    if waiting:
        state.turn = waiting[0]
        return
    order = state.order()

    def rank(i: int) -> tuple[int, int, int]:
        c = state.clans[i]
        assert c.bid is not None
        return (-c.bid.markers, -c.rongo, order.index(i))

    state.priority = sorted(order, key=rank)
    _start_phase(state, island, "choose")


def _choose(state: State, island: Island, clan: Clan, action: Choose) -> None:
    if state.phase != "choose":
        raise IllegalMove("Moai are chosen after the bids are shown.")
    if action.size not in state.quarry:
        raise IllegalMove(f"No Moai of size {action.size} is left on the quarry tile.")
    if action.size > clan.sculptors:
        raise IllegalMove(
            f"A Moai of size {action.size} needs {action.size} sculptors; "
            f"{clan.name} has {clan.sculptors} left."
        )
    state.quarry.remove(action.size)
    clan.sculptors -= action.size
    state.made += 1
    item_id = f"moai{state.made}"
    state.items[item_id] = Item(item_id, "moai", action.size, clan.name)
    advance(state, island, state.turn)


def _pass(state: State, island: Island, clan: Clan) -> None:
    if state.phase not in ("choose", "place", "transport", "marking", "reclaim"):
        raise IllegalMove(f"There is nothing to pass in the {state.phase} phase.")
    if state.phase == "place" and (clan.free_workers > 0 or clan.sorcerer or clan.chief):
        # Not final while pieces are still available ("a meno che non siano ancora
        # disponibili delle pedine"): the player is asked again after the next placement.
        clan.waiting = True
    else:
        clan.done = True
    advance(state, island, state.turn)


def _placed(state: State) -> None:
    """Someone placed: every player who passed with pieces still available may place again."""
    for clan in state.clans:
        clan.waiting = False


def _place(state: State, island: Island, clan: Clan, action: Place) -> None:  # noqa: C901
    if state.phase != "place":
        raise IllegalMove("Pieces are placed on the island in the placing phase.")
    hex_info = island.hex_by_id.get(action.hex)
    if hex_info is None:
        raise IllegalMove(f"There is no hex {action.hex} on the island.")
    if action.piece == "worker" and clan.free_workers < 1:
        raise IllegalMove(f"{clan.name} has no worker left behind the screen.")
    if action.piece == "sorcerer" and not clan.sorcerer:
        raise IllegalMove(f"{clan.name}'s sorcerer is not behind the screen.")
    if action.piece == "chief" and not clan.chief:
        raise IllegalMove(f"{clan.name}'s chief is not behind the screen.")
    if action.logs:
        # Logs beside the chief are pointless ("non ha senso"), not forbidden.
        if action.logs > 2:
            raise IllegalMove("At most 2 logs go with a piece.")
        if action.logs > clan.logs:
            raise IllegalMove(f"{clan.name} has only {clan.logs} logs.")
    if action.ahu is not None and not action.power:
        raise IllegalMove("An Ahu is named only to reserve it with a power.")
    if action.tablets != 1 and not (action.piece == "chief" and action.power):
        raise IllegalMove(
            "Only the chief, breaking one Rongo tablet each time, acts more than once."
        )
    if action.power:
        if action.piece == "worker":
            raise IllegalMove(
                "Only the sorcerer, or the chief breaking a Rongo tablet, has powers."
            )
        if action.piece == "chief" and clan.rongo < 2 * action.tablets:
            if action.tablets == 1:
                raise IllegalMove(
                    "The chief needs a whole Rongo tablet (two halves) to use a power."
                )
            raise IllegalMove(
                f"Breaking {action.tablets} Rongo tablets takes {2 * action.tablets} halves; "
                f"{clan.name} has {clan.rongo}."
            )
        _power(state, island, clan, action, check_only=True)
    # Everything is checked: change the state.
    if action.piece == "worker":
        clan.free_workers -= 1
    elif action.piece == "sorcerer":
        clan.sorcerer = False
    else:
        clan.chief = False
    clan.logs -= action.logs
    state.pieces.setdefault(action.hex, []).append(
        Piece(clan.name, action.piece, powered=action.power)
    )
    if action.logs:
        state.board_logs[action.hex] = state.board_logs.get(action.hex, 0) + action.logs
    if action.power:
        if action.piece == "chief":
            clan.rongo -= 2 * action.tablets
            state.rongo += 2 * action.tablets  # broken tablets go back into the box
        _power(state, island, clan, action, check_only=False)
    _placed(state)
    advance(state, island, state.turn)


def _short(have: int, times: int, what: str) -> str:
    """The refusal when the container or supply holds `have` of `what`, fewer than `times`."""
    if have < 1:
        return f"No {what} is left in the container."
    return f"Only {have} {what}s are left in the container, not {times}."


def _power(state: State, island: Island, clan: Clan, action: Place, *, check_only: bool) -> None:  # noqa: C901
    """The hex's power, once per Rongo tablet the chief breaks (`action.tablets`)."""
    kind = island.hex_by_id[action.hex].kind
    who = state.index(clan.name)
    ahus = island.ahus_at[action.hex]
    times = action.tablets
    if action.ahu is not None and not ahus:
        raise IllegalMove(f"Hex {action.hex} touches no Ahu.")
    if kind == "village":
        if state.container_workers[who] < times:
            raise IllegalMove(_short(state.container_workers[who], times, f"{clan.name} worker"))
        if not check_only:
            state.container_workers[who] -= times
            clan.workers += times
            clan.free_workers += times
    elif kind == "hut":
        if state.container_markers[who] < times:
            raise IllegalMove(
                _short(state.container_markers[who], times, f"{clan.name} tribe marker")
            )
        if not check_only:
            state.container_markers[who] -= times
            clan.markers += times
            clan.free_markers += times
    elif kind == "forest":
        if action.hex in state.cleared:
            raise IllegalMove("This forest has already been cut.")
        if times > 1:
            raise IllegalMove("A forest is cut once: a second tablet there would bring nothing.")
        if not check_only:
            got = min(island.hex_by_id[action.hex].logs, state.logs)
            state.logs -= got
            clan.logs += got
            state.cleared.add(action.hex)
    elif kind == "headdress_quarry":
        if state.headdresses < 1:
            raise IllegalMove("No headdress is left to sculpt.")
        if state.headdresses < times:
            raise IllegalMove(f"Only {state.headdresses} headdresses are left, not {times}.")
        if not check_only:
            state.headdresses -= times
            for _ in range(times):
                state.made += 1
                item_id = f"headdress{state.made}"
                state.items[item_id] = Item(item_id, "headdress", 1, clan.name)
    elif ahus:
        if action.ahu is None:
            raise IllegalMove(f"Name the Ahu to reserve: {', '.join(ahus)}.")
        if action.ahu not in ahus:
            raise IllegalMove(f"Ahu {action.ahu} does not touch hex {action.hex}.")
        if state.ahus[action.ahu].base is not None:
            raise IllegalMove(f"Ahu {action.ahu} already holds a base.")
        others = [a for a in ahus if a != action.ahu and state.ahus[a].base is None]
        targets = [action.ahu, *others][:times]
        if len(targets) < times:
            raise IllegalMove(f"Hex {action.hex} has no other free Ahu to reserve.")
        if clan.bases < 1:
            raise IllegalMove(f"{clan.name} has no base left behind the screen.")
        if clan.bases < times:
            raise IllegalMove(f"{clan.name} has only {clan.bases} base behind the screen.")
        if not check_only:
            for ahu_id in targets:
                clan.bases -= 1
                state.ahus[ahu_id].base = clan.name
                state.ahus[ahu_id].reserved = True
    else:
        raise IllegalMove(f"Hex {action.hex} has no power to use.")


def _take_rongo(state: State, island: Island, clan: Clan) -> None:
    if state.phase != "place":
        raise IllegalMove("Rongo half-tablets are taken in the placing phase.")
    if clan.free_markers < 1:
        raise IllegalMove(f"{clan.name} has no tribe marker left to spend.")
    if state.rongo < 1:
        raise IllegalMove("No Rongo half-tablet is left in the box.")
    clan.free_markers -= 1
    clan.rongo += 1
    state.rongo -= 1
    _placed(state)
    advance(state, island, state.turn)


def _movable(state: State, clan: Clan, item_id: str) -> Item:
    """The item a transport action names, if this clan may take it now."""
    item = state.items.get(item_id)
    if item is None:
        raise IllegalMove(f"There is no Moai or headdress {item_id}.")
    if item.ahu is not None:
        raise IllegalMove(f"{item_id} already stands on Ahu {item.ahu}.")
    if item.owner is not None and item.owner != clan.name:
        if item.marked:
            raise IllegalMove(f"{item_id} carries {item.owner}'s tribe marker.")
        raise IllegalMove(f"{item_id} is {item.owner}'s this turn.")
    return item


def _presence(state: State, hex_id: str, name: str) -> bool:
    """An unpowered piece of this clan stands on the hex, acting as a worker: erecting needs
    one ("almeno un lavoratore del suo colore")."""
    return any(p.owner == name and not p.powered for p in state.pieces.get(hex_id, []))


def _any_piece(state: State, hex_id: str, name: str) -> bool:
    """A piece of this clan stands on the hex, powered or not: covering a Moai needs one
    ("almeno una pedina sull'esagono adiacente all'Ahu")."""
    return any(p.owner == name for p in state.pieces.get(hex_id, []))


def start_of(island: Island, item: Item) -> str:
    if item.hex is not None:
        return item.hex
    return island.only("moai_quarry" if item.kind == "moai" else "headdress_quarry")


def _move(state: State, island: Island, clan: Clan, action: Move) -> Move:  # noqa: C901
    if state.phase != "transport":
        raise IllegalMove("Moai and headdresses move in the transport phase.")
    item = _movable(state, clan, action.item)
    start = here = start_of(island, item)
    seen = {*item.trail, here}
    if action.help is not None and len(action.help) != len(action.path):
        raise IllegalMove("The move's help needs one entry per hex entered.")
    helps: list[Way] = []
    for k, step in enumerate(action.path):
        if step not in island.hex_by_id:
            raise IllegalMove(f"There is no hex {step} on the island.")
        if step not in island.neighbours[here]:
            raise IllegalMove(f"Hex {step} does not touch hex {here}.")
        if step in seen:
            raise IllegalMove(f"{item.id} has already been on hex {step} this turn.")
        ways = help_options(state, step, clan.name, item.size)
        if ways is None:
            raise IllegalMove(f"The pieces on hex {step} cannot carry {_load(item)}.")
        if action.help is None:
            helps.append(ways[0])
        else:
            if action.help[k] not in ways:
                raise IllegalMove(f"On hex {step} the help must be one of {_ways_text(ways)}.")
            helps.append(action.help[k])
        seen.add(step)
        here = step
    if action.erect is not None and action.cap is not None:
        raise IllegalMove("A move ends erecting a Moai or covering one, not both.")
    end_marked = False
    if action.erect is not None:
        _check_erect(state, island, clan, item, here, action.erect)
        if action.mark:
            raise IllegalMove("An erected Moai is not marked.")
    elif action.cap is not None:
        _check_cap(state, island, clan, item, here, action.cap)
        if action.mark:
            raise IllegalMove("A headdress on a Moai is not marked.")
    else:
        if not action.path:
            raise IllegalMove("A move enters at least one hex, or erects or covers where it is.")
        if action.mark:
            if item.marked:
                raise IllegalMove(f"{item.id} already carries a tribe marker.")
            if clan.free_markers < 1:
                raise IllegalMove(f"{clan.name} has no tribe marker to mark {item.id}.")
        elif item.owner is None:
            raise IllegalMove(
                f"{item.id} was abandoned: whoever takes it must erect it, set it on a Moai "
                "or mark it."
            )
        end_marked = action.mark
    # Everything is checked: change the state.
    for way in helps:
        for name, points in way:
            state.clan(name).prestige += points
    item.trail = [*(item.trail or [start]), *action.path]
    item.owner = clan.name
    item.hex = here
    if action.path:
        state.moved = True
    if action.erect is not None:
        spot = state.ahus[action.erect]
        if spot.base is None:
            clan.bases -= 1
            spot.base = clan.name
        spot.moai = item.id
        _settle(clan, item, action.erect)
        clan.erected += 1
        state.moved = True
        if state.open_scoring:
            clan.prestige += island.ahu_by_id[action.erect].value * item.size
    elif action.cap is not None:
        state.ahus[action.cap].headdress = item.id
        _settle(clan, item, action.cap)
        state.moved = True
    elif end_marked:
        item.marked = True
        clan.free_markers -= 1
    recorded = Move(
        action.player,
        action.item,
        action.path,
        action.erect,
        action.cap,
        action.mark,
        tuple(helps),
    )
    advance(state, island, state.turn)
    return recorded


def _settle(clan: Clan, item: Item, ahu: str) -> None:
    item.ahu = ahu
    item.hex = None
    if item.marked:  # the marker comes back at once
        item.marked = False
        clan.free_markers += 1


def _load(item: Item) -> str:
    return "a headdress" if item.kind == "headdress" else f"a Moai of size {item.size}"


def _ways_text(ways: list[Way]) -> str:
    def one(way: Way) -> str:
        return " and ".join(f"{points} to {name}" for name, points in way) or "nobody"

    return "; ".join(one(w) for w in ways)


def _ahu_beside(state: State, island: Island, ahu_id: str, here: str) -> AhuState:
    """The Ahu `ahu_id` as it stands, when it touches hex `here`; else IllegalMove."""
    ahu = island.ahu_by_id.get(ahu_id)
    if ahu is None:
        raise IllegalMove(f"There is no Ahu {ahu_id}.")
    if ahu.hex != here:
        raise IllegalMove(f"Ahu {ahu_id} touches hex {ahu.hex}, not hex {here}.")
    return state.ahus[ahu_id]


def _check_erect(
    state: State, island: Island, clan: Clan, item: Item, here: str, ahu_id: str
) -> None:
    if item.kind != "moai":
        raise IllegalMove("Only a Moai is erected; a headdress covers a Moai.")
    spot = _ahu_beside(state, island, ahu_id, here)
    if spot.moai is not None:
        raise IllegalMove(f"A Moai already stands on Ahu {ahu_id}.")
    if spot.base is not None and spot.base != clan.name:
        raise IllegalMove(f"Ahu {ahu_id} is reserved by {spot.base}.")
    if spot.base is None and clan.bases < 1:
        raise IllegalMove(f"{clan.name} has no base left to erect a Moai on.")
    if not _presence(state, here, clan.name):
        raise IllegalMove(f"Erecting needs a piece of {clan.name}'s on hex {here}.")


def _check_cap(
    state: State, island: Island, clan: Clan, item: Item, here: str, ahu_id: str
) -> None:
    if item.kind != "headdress":
        raise IllegalMove("Only a headdress covers a Moai.")
    spot = _ahu_beside(state, island, ahu_id, here)
    if spot.moai is None:
        raise IllegalMove(f"No Moai stands on Ahu {ahu_id} yet.")
    if spot.headdress is not None:
        raise IllegalMove(f"The Moai on Ahu {ahu_id} already wears a headdress.")
    if not _any_piece(state, here, clan.name):
        raise IllegalMove(f"Covering a Moai needs a piece of {clan.name}'s on hex {here}.")


def _mark(state: State, island: Island, clan: Clan, action: Mark) -> None:
    if state.phase == "marking":
        if action.item not in state.unmoved or state.items[action.item].owner != clan.name:
            raise IllegalMove(
                f"At the end of transport {clan.name} may mark only a Moai or headdress of "
                "theirs that did not move this turn."
            )
    elif state.phase != "transport":
        raise IllegalMove("Moai and headdresses are marked in the transport phase.")
    item = _movable(state, clan, action.item)
    if item.marked:
        raise IllegalMove(f"{item.id} already carries a tribe marker.")
    if clan.free_markers < 1:
        raise IllegalMove(f"{clan.name} has no tribe marker to mark {item.id}.")
    item.hex = start_of(island, item)  # one before the screen goes to its quarry
    item.owner = clan.name
    item.marked = True
    clan.free_markers -= 1
    if action.item in state.unmoved:
        state.unmoved.remove(action.item)
    advance(state, island, state.turn)


def _reclaim(state: State, island: Island, clan: Clan, action: Reclaim) -> None:
    if state.phase != "reclaim":
        raise IllegalMove("Tribe markers come back from Moai at the end of the turn.")
    item = state.items.get(action.item)
    if item is None or not item.marked or item.owner != clan.name:
        raise IllegalMove(f"{action.item} carries no tribe marker of {clan.name}'s.")
    item.marked = False
    item.owner = None
    advance(state, island, state.turn)


# --- what may be done now -----------------------------------------------------------------------


def legal_actions(state: State, island: Island) -> list[Action]:
    name = to_move(state)
    if name is None:
        return []
    clan = state.clan(name)
    if state.phase == "roll":
        return [Roll(name, dice) for dice in all_rolls(island, len(state.clans))]
    if state.phase == "bid":
        return [
            Bid(name, m, w, s, c)
            for m in range(clan.free_markers + 1)
            for w in range(clan.free_workers + 1)
            for s in ((False, True) if clan.sorcerer else (False,))
            for c in ((False, True) if clan.chief else (False,))
        ]
    if state.phase == "choose":
        sizes = sorted({s for s in state.quarry if s <= clan.sculptors})
        return [*(Choose(name, s) for s in sizes), Pass(name)]
    if state.phase == "place":
        return [*place_actions(state, island, clan), Pass(name)]
    if state.phase == "transport":
        return transport_actions(state, island, name)
    if state.phase == "marking":
        mine = [k for k in state.unmoved if state.items[k].owner == name]
        return [*(Mark(name, k) for k in mine), Pass(name)]
    marked = [i.id for i in state.items.values() if i.marked and i.owner == name]
    return [*(Reclaim(name, i) for i in marked), Pass(name)]


def all_rolls(island: Island, players: int) -> list[tuple[int, ...]]:
    """Every distinct roll: white dice sorted, then brown dice sorted."""
    white = itertools.combinations_with_replacement(sorted(set(island.white)), 3)
    brown = list(itertools.combinations_with_replacement(sorted(set(island.brown)), players - 3))
    return [w + b for w in white for b in brown]


def place_actions(state: State, island: Island, clan: Clan) -> list[Action]:
    out: list[Action] = []
    pieces = [
        p
        for p, ok in (
            ("worker", clan.free_workers > 0),
            ("sorcerer", clan.sorcerer),
            ("chief", clan.chief),
        )
        if ok
    ]
    for piece in pieces:
        for h in island.hexes:
            logs = range(min(2, clan.logs) + 1)
            for n in logs:
                out.append(Place(clan.name, piece, h.id, n))
            if piece == "worker" or (piece == "chief" and clan.rongo < 2):
                continue
            targets: list[str | None] = list(island.ahus_at[h.id]) or [None]
            most = clan.rongo // 2 if piece == "chief" else 1
            for n in logs:
                for ahu in targets:
                    for tablets in range(1, most + 1):
                        action = Place(clan.name, piece, h.id, n, True, ahu, tablets)
                        try:
                            _power(state, island, clan, action, check_only=True)
                        except IllegalMove:
                            break
                        out.append(action)
    if clan.free_markers > 0 and state.rongo > 0:
        out.append(TakeRongo(clan.name))
    return out


def reach(state: State, island: Island, mover: str, item: Item) -> dict[str, tuple[str, ...]]:
    """Where `mover` can take `item` now: each hex with the path that gives the fewest points
    away (then the fewest hexes); the start hex maps to the empty path."""
    start = start_of(island, item)
    banned = set(item.trail)
    best: dict[str, tuple[int, int]] = {start: (0, 0)}
    paths: dict[str, tuple[str, ...]] = {start: ()}
    todo: list[tuple[int, int, str]] = [(0, 0, start)]
    while todo:
        cost, steps, here = heapq.heappop(todo)
        if best[here] < (cost, steps):
            continue
        for nxt in island.neighbours[here]:
            if nxt in banned or nxt == start:
                continue
            ways = help_options(state, nxt, mover, item.size)
            if ways is None:
                continue
            key = (cost + help_cost(ways[0]), steps + 1)
            if nxt not in best or key < best[nxt]:
                best[nxt] = key
                paths[nxt] = (*paths[here], nxt)
                heapq.heappush(todo, (key[0], key[1], nxt))
    return paths


def transport_actions(state: State, island: Island, name: str) -> list[Action]:
    """Moves (one path per item, destination and ending), marks, and passing."""
    clan = state.clan(name)
    out: list[Action] = []
    for item in state.items.values():
        if item.ahu is not None or item.owner not in (None, name):
            continue
        for dest, path in reach(state, island, name, item).items():
            erects = item.kind == "moai" and _presence(state, dest, name)
            caps = item.kind == "headdress" and _any_piece(state, dest, name)
            for ahu_id in island.ahus_at[dest] if erects or caps else ():
                spot = state.ahus[ahu_id]
                free = spot.base == name or (spot.base is None and clan.bases > 0)
                if erects and spot.moai is None and free:
                    out.append(Move(name, item.id, path, erect=ahu_id))
                if caps and spot.moai is not None and spot.headdress is None:
                    out.append(Move(name, item.id, path, cap=ahu_id))
            if not path:
                continue
            if item.owner is not None:
                out.append(Move(name, item.id, path))
            if not item.marked and clan.free_markers > 0:
                out.append(Move(name, item.id, path, mark=True))
        if not item.marked and clan.free_markers > 0:
            out.append(Mark(name, item.id))
    out.append(Pass(name))
    return out


def new_state(
    names: list[str], island: Island, *, two_workers: bool = False, open_scoring: bool = False
) -> State:
    start_workers = 2 if two_workers else 1
    n = len(names)
    clans = [
        Clan(
            name=name,
            workers=start_workers,
            markers=START_MARKERS,
            free_workers=start_workers,
            free_markers=START_MARKERS,
            sorcerer=True,
            chief=True,
            bases=BASES[n],
        )
        for name in names
    ]
    return State(
        clans=clans,
        stock=list(island.moai),
        headdresses=island.headdresses,
        logs=island.logs,
        rongo=island.rongo_halves,
        container_workers=[max(0, island.workers_per_colour - start_workers)] * n,
        container_markers=[max(0, island.markers_per_colour - START_MARKERS)] * n,
        ahus={a.id: AhuState() for a in island.ahus},
        two_workers=two_workers,
        open_scoring=open_scoring,
    )
