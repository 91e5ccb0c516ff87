"""The game's state: clans, the island's pieces, the Moai and headdresses, the turn's phase."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from companion.games.giants.actions import Bid

# Bases per player by player count ("3 Giocatori, ognuno prende 7 basi ...").
BASES = {3: 7, 4: 6, 5: 5}
START_MARKERS = 2


@dataclass
class Clan:
    """One player: what they own, what is usable this turn, the track and this turn's bid."""

    name: str
    workers: int  # owned in all (behind the screen, bid, or on the island)
    markers: int  # owned in all (behind the screen, spent this turn, or on Moai/headdresses)
    free_workers: int  # behind the screen, usable now
    free_markers: int
    sorcerer: bool  # behind the screen, usable now
    chief: bool
    logs: int = 0
    rongo: int = 0  # Rongo half-tablets before the screen
    bases: int = 0  # behind the screen
    prestige: int = 0  # the points track
    bid: Bid | None = None
    sculptors: int = 0  # what is left of the bid's sculptors while choosing
    done: bool = False  # passed in this phase for good (or declined a Moai)
    waiting: bool = False  # passed while placing with pieces left: asked again after a placement
    erected: int = 0  # Moai of this clan standing on an Ahu


@dataclass(frozen=True)
class Piece:
    """A worker, sorcerer or chief on a hex; a powered one has used its action this turn."""

    owner: str
    piece: str
    powered: bool = False


@dataclass
class Item:
    """A Moai or a headdress that has left the box.

    Before a screen (won or sculpted this turn): hex and ahu are None. On the island: hex is set;
    owner is who may move it (None: abandoned, anyone may take it). On an Ahu: ahu is set.
    """

    id: str
    kind: str  # "moai" or "headdress"
    size: int  # a headdress travels like a Moai of size 1
    owner: str | None
    hex: str | None = None
    ahu: str | None = None
    marked: bool = False
    trail: list[str] = field(default_factory=list)  # hexes it has been on this turn


@dataclass
class AhuState:
    """Who holds an Ahu: a base (face down, or face up when reserved), its Moai and headdress."""

    base: str | None = None
    reserved: bool = False
    moai: str | None = None
    headdress: str | None = None


@dataclass
class State:
    clans: list[Clan]
    stock: list[int]  # Moai of size 1, 2, 3 left in the box
    headdresses: int  # left on the headdress tile
    logs: int  # left in the logs' area
    rongo: int  # half-tablets left in the box
    container_workers: list[int]  # per clan, in the container
    container_markers: list[int]
    ahus: dict[str, AhuState]
    two_workers: bool = False
    open_scoring: bool = False
    round: int = 1
    first: int = 0
    phase: str = "roll"
    turn: int | None = 0
    dice: tuple[int, ...] = ()
    quarry: list[int] = field(default_factory=list)  # sizes on the Moai quarry tile
    broken: int = 0  # dice this turn that showed an exhausted size
    priority: list[int] = field(default_factory=list)  # the auction's choosing order
    pieces: dict[str, list[Piece]] = field(default_factory=dict)
    board_logs: dict[str, int] = field(default_factory=dict)
    cleared: set[str] = field(default_factory=set)  # forests already cut
    items: dict[str, Item] = field(default_factory=dict)
    made: int = 0  # Moai and headdresses taken from the box so far (for ids)
    moved: bool = False  # some Moai or headdress moved this turn
    dry: bool = False  # the box held no Moai when this turn's dice were rolled
    unmoved: list[str] = field(default_factory=list)  # left before a screen this transport
    over: bool = False

    def copy(self) -> State:
        """An independent copy (what `push` works on, so that a refusal changes nothing)."""
        return replace(
            self,
            clans=[replace(c) for c in self.clans],
            stock=list(self.stock),
            container_workers=list(self.container_workers),
            container_markers=list(self.container_markers),
            ahus={k: replace(v) for k, v in self.ahus.items()},
            quarry=list(self.quarry),
            priority=list(self.priority),
            pieces={k: list(v) for k, v in self.pieces.items()},
            board_logs=dict(self.board_logs),
            cleared=set(self.cleared),
            items={k: replace(v, trail=list(v.trail)) for k, v in self.items.items()},
            unmoved=list(self.unmoved),
        )

    def clan(self, name: str) -> Clan:
        return next(c for c in self.clans if c.name == name)

    def index(self, name: str) -> int:
        return next(i for i, c in enumerate(self.clans) if c.name == name)

    def order(self) -> list[int]:
        """Clan indices in turn order, from the first player clockwise."""
        n = len(self.clans)
        return [(self.first + k) % n for k in range(n)]
