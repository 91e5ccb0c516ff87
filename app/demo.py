"""`companion demo`: a whole synthetic game through the real pipeline.

Simulated players (companion.bots.GreedyPlayer) play on a simulated table: each lays their
tile on the table, their hands move over it for a moment, then they press "turn done". The
synthetic camera renders the table (vision.synthetic.render), the motion gate waits for a still
table, the recogniser reads the frame, the tracker works out the turn, the rules check it and the
Session records it, and every phone page follows live. When a read is doubtful the simulated
host answers the question by looking at the table (it knows the truth); when it is
unreadable, the player clears the table and presses again; a refused read (a misread of a
legal turn) is entered by hand, as a host would. The summary at the end counts each case.

Early on the demo shows what the companion is for: its first turn is pressed before the
explorer ship is moved (refused, with the rule's sentence, then moved and read again), and
a hand rests on the tile laid in the first turn that lays one on a board (the companion
asks the host, who answers). Both are recorded as played, so a seed's scores stay the same.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from app.board_games import NAMES
from companion.actions import TakeToBoard, Turn, Variant
from companion.bots import GreedyPlayer
from companion.errors import CompanionError, DataError
from companion.game import Seat, new_game, score_state
from companion.gamefile import dump_game
from companion.games import DEFAULT_GAME, game_keys
from companion.games.session import BoardSession, board_journal
from companion.progress import terminal_progress
from companion.session import Session
from companion.state import GameState
from companion.tracker import Accepted, Doubtful, Refused, Verdict

#: Seconds between two turns' presses with the page (a real table: 20-60) and headless
#: (simulated time). With the page the default lets a whole game and the first read's
#: learning fit in about two minutes on the reference machine (docs/vision.md).
PAGE_PACE = 0.2
HEADLESS_PACE = 0.6
#: A hand covers the cell laid on in the first turn up to this one that lays on a board.
SHOWN_BY = 8
#: The share of a turn's pace the table lies still before the press (the rest: hands).
STILL_SHARE = 0.4
COLOURS = ("red", "blue", "yellow", "green", "purple")


@dataclass
class Tally:
    """How each turn reached the record."""

    read: int = 0
    confirmed: int = 0
    reread: int = 0
    by_hand: int = 0
    mismatched: int = 0
    setup_corrections: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    # What the demo shows early on purpose: a turn refused, a covered cell asked about.
    shown: list[str] = field(default_factory=list)

    def summary(self) -> str:
        turns = self.read + self.confirmed + self.by_hand
        lines = [
            f"{turns} turns in {self.seconds:.0f} s: {self.read} read by the camera, "
            f"{self.confirmed} confirmed by the host, {self.by_hand} entered by hand; "
            f"{self.reread} presses repeated after an unreadable table"
        ]
        lines += [f"  shown: {what}" for what in self.shown]
        lines += [f"  entered by hand: {why}" for why in self.notes]
        if self.mismatched:
            lines.append(f"  {self.mismatched} turns recorded differently from the table!")
        return "\n".join(lines)


def pack_for_demo(style: str, cache: Path) -> Path:
    """A procedurally drawn pack, made once and kept in `cache`."""
    from vision.synthetic.artpacks import write_art_pack

    target = cache / f"pack-{style}"
    if not (target / "pack.toml").exists():
        cache.mkdir(parents=True, exist_ok=True)
        write_art_pack(target, style)
    return target


def default_cache() -> Path:
    """Where the demo's drawn pack is kept: the cache directory of the learnt models."""
    from vision.box.cache import cache_dir

    return cache_dir()


class Demo:
    """One demo game: the simulated table, the pipeline around a Session, the players."""

    def __init__(self, args: argparse.Namespace) -> None:
        from hardware.camera import SyntheticSource
        from hardware.config import CameraConfig
        from hardware.live import LiveSettings, LiveTable
        from vision.box.pack import load_pack

        self.args = args
        self.rng = random.Random(args.seed)
        cache = Path(args.cache) if args.cache else default_cache()
        self.pack = load_pack(args.pack or pack_for_demo(args.style, cache))
        catalogue = self.pack.catalogue
        seats = [Seat(NAMES[i], i + 1, COLOURS[i]) for i in range(args.players)]
        self.world: GameState = new_game(
            seats,
            seed=args.seed,
            ship=self.rng.randrange(16),
            side=args.side,
            variant=args.variant,
            catalogue=catalogue,
        )
        self.seats = seats
        if args.state_dir:
            from companion.journal import Journal
            from companion.rules import rules_for

            self.session = Session.resume(Journal(args.state_dir), catalogue)
            if self.session.game is not None:
                # The table is as the saved game left it: replay its turns on the world.
                rules = rules_for(self.world.variant, self.world.matching)
                for record in self.session.game.records:
                    rules.apply(self.world, record.turn)
        else:
            self.session = Session(catalogue)
        self.tally = Tally()
        self.hands = 0
        self.cover: tuple[int, tuple[int, int]] | None = None  # a hand resting on a cell
        self.to_ask = True  # the question of a covered cell is still to be shown
        self.frame_seed = args.seed
        self.sim_time = 0.0
        self.camera_spec = self._camera()
        self.camera = SyntheticSource(
            self._render, config=CameraConfig(kind="synthetic"), clock=self._clock, ahead=True
        )
        self.camera.open()
        from vision.reader.incremental import IncrementalReader

        self.reader = IncrementalReader(self.pack, side=args.side)
        self.live = LiveTable(
            self.session,
            self.camera,
            self.reader,
            _gate(args.pace),
            settings=LiveSettings(preview_interval_s=0.0 if args.headless else 0.1),
            clock=self._clock,
        )

    # -------------------------------------------------------------- the table

    def _clock(self) -> float:
        return self.sim_time if self.args.headless else time.monotonic()

    def _camera(self) -> Any:
        from vision.synthetic.render import CameraSpec

        return CameraSpec.overhead(roll_deg=self.rng.uniform(0, 360))

    def _render(self) -> np.ndarray:
        from vision.synthetic.render import Effects, render_table
        from vision.synthetic.table_scene import scene_for_state

        self.frame_seed += 1
        scene = scene_for_state(
            self.world,
            table_seed=self.args.seed,
            hands=self.hands,
            rng=np.random.default_rng(self.frame_seed),
        )
        if self.cover is not None:
            from vision.synthetic.scene import hand_over_cell

            seat, cell = self.cover
            scene = hand_over_cell(
                scene, self.pack.catalogue, seat, cell, np.random.default_rng(self.args.seed)
            )
        rendered = render_table(
            scene,
            self.pack,
            self.camera_spec,
            Effects.easy(),
            np.random.default_rng(self.frame_seed),
        )
        image: np.ndarray = rendered.image
        return image

    def _wait(self, seconds: float) -> None:
        """Let time pass while the live loop runs (simulated time when headless)."""
        end = self._clock() + seconds
        while self._clock() < end:
            if self.args.headless:
                self.sim_time += 0.1
                self.live.step()
            else:
                self.live.step(block=0.05)

    # -------------------------------------------------------------- the game

    def setup(self) -> None:
        """Read the first display through the camera; the host names the players."""
        self._press_and_read(None)
        read = self.session.last_read
        display: list[list[str | None]] = []
        for r in range(4):
            row: list[str | None] = []
            for c in range(4):
                seen = read.display[r][c] if read else None
                truth = self.world.display[r][c]
                tile = seen.tile if seen is not None and not seen.empty else None
                if tile != truth:
                    self.tally.setup_corrections += 1  # the host types the tile in
                row.append(truth)
            display.append(row)
        ship = read.ship if read and read.ship is not None else self.world.ship
        if ship != self.world.ship:
            self.tally.setup_corrections += 1
            ship = self.world.ship
        self.session.start_game(
            self.seats,
            start_player=self.world.start_player,
            ship=ship,
            side=self.args.side,
            variant=self.args.variant,
            display=display,
            seed=self.args.seed + 1,
        )

    def _press_and_read(self, seat: int | None) -> Verdict | None:
        from hardware.buttons import TurnDone

        verdicts: list[Verdict] = []
        self.session.listeners.on_verdict.append(verdicts.append)
        try:
            before = self.live.reads
            self.live.events.put(TurnDone(seat, self._clock()))
            deadline = self._clock() + 60
            while self.live.reads == before and self._clock() < deadline:
                self._wait(0.1)
                if not self.session.reading and self.live.waiting_since is None:
                    break
        finally:
            self.session.listeners.on_verdict.remove(verdicts.append)
        return verdicts[-1] if verdicts else None

    def play_turn(self) -> None:
        from companion.rules import rules_for

        rules = rules_for(self.world.variant, self.world.matching)
        mover = self.world.mover
        # A fresh generator per turn: a resumed game chooses exactly as an unbroken one.
        bot = GreedyPlayer(random.Random(self.args.seed * 100_003 + self.world.turn_number))
        turn = bot.choose(rules, self.world)
        number = self.world.turn_number
        ship_before = self.world.ship
        record = rules.apply(self.world, turn)
        truth = record.turn
        # Early on, what the companion is for: a refused turn, then a question to the host.
        if number == 0:
            self._refused_then_right(mover.seat, ship_before)
        elif 0 < number <= SHOWN_BY and self.to_ask and isinstance(turn.action, TakeToBoard):
            self.to_ask = False
            if self._asked_and_answered(mover.seat, turn.action.cell, truth):
                self._check_against_world()
                return
        self._lay()
        for _attempt in range(3):
            verdict = self._press_and_read(mover.seat)
            if self._resolve(verdict, truth):
                break
            self.tally.reread += 1
        else:
            self._by_hand(truth, "the table stayed unreadable")
        self._check_against_world()

    def _lay(self) -> None:
        """Hands over the table for a part of the pace, then away and still."""
        self.hands = 1
        self.camera.set_motion(True)
        self._wait(self.args.pace * (1 - STILL_SHARE))
        self.hands = 0
        self.camera.set_motion(False)
        self._wait(self.args.pace * STILL_SHARE)

    def _refused_then_right(self, seat: int, ship_before: int) -> None:
        """The demo's first turn, shown on purpose: the player lays the tile but leaves the
        explorer ship where it stood and presses; the companion refuses the turn with its
        sentence; the player then moves the ship (the turn is read again as usual)."""
        moved_to = self.world.ship
        self.world.ship = ship_before
        self._lay()
        verdict = self._press_and_read(seat)
        if isinstance(verdict, Refused):
            self.tally.shown.append(f"a turn refused: {verdict.reason}")
        self.world.ship = moved_to

    def _asked_and_answered(self, seat: int, cell: tuple[int, int], truth: Turn) -> bool:
        """The demo's second turn, shown on purpose: a hand rests on the cell the tile was
        laid on when the player presses; the companion asks the host which turn it was and
        the host answers (True once the turn is recorded)."""
        self.cover = (seat, cell)
        try:
            self._lay()
            verdict = self._press_and_read(seat)
        finally:
            self.cover = None
        if not isinstance(verdict, Doubtful):
            return self._resolve(verdict, truth)
        recorded = self._resolve(verdict, truth)
        if recorded:
            self.tally.shown.append(f"a covered cell asked about: {verdict.reason}")
        return recorded

    def _resolve(self, verdict: Verdict | None, truth: Turn) -> bool:
        """The simulated host's part; True once the turn is recorded."""
        session = self.session
        if isinstance(verdict, Accepted):
            self.tally.read += 1
            return True
        if isinstance(verdict, Doubtful):
            outcome = _outcome_of(session, truth)
            for index, candidate in enumerate(verdict.candidates):
                if _outcome_of(session, candidate) == outcome:
                    session.confirm(index)
                    self.tally.confirmed += 1
                    return True
            session.dismiss()
            self._by_hand(truth, "no offered turn matched the table")
            return True
        if isinstance(verdict, Refused):
            self._by_hand(truth, verdict.reason)
            return True
        return False  # unreadable or nothing: clear the table and press again

    def _by_hand(self, truth: Turn, why: str) -> None:
        self.session.play(truth)
        self.tally.by_hand += 1
        self.tally.notes.append(why)

    def _check_against_world(self) -> None:
        game = self.session.game
        assert game is not None
        if game.state.players != self.world.players or game.state.display != self.world.display:
            self.tally.mismatched += 1

    def run(self) -> GameState:
        from app.learning import learn_box

        start = time.monotonic()
        # The box's models before the first read, shown on the terminal and the phones.
        learn_box(self.reader.tables, None if self.args.headless else self.session)
        if self.session.game is None:
            self.setup()
        shown = terminal_progress("playing:")
        while not self.world.over:
            self.play_turn()
            if shown is not None:
                shown.note(
                    f"turn {self.world.turn_number}, "
                    f"{len(self.world.stack)} tiles left; {_scores(self.world)}"
                )
        if shown is not None:
            shown.finish()
        self.tally.seconds = time.monotonic() - start
        game = self.session.game
        assert game is not None
        return game.state


def _scores(state: GameState) -> str:
    """Each player's score if the game ended now, in one short line."""
    final = score_state(state)
    return ", ".join(f"{p.name} {p.total}" for p in final.players)


def _outcome_of(session: Session, turn: Turn) -> Any:
    game = session.game
    assert game is not None
    state = game.state.copy()
    try:
        game.rules.apply(state, turn)
    except CompanionError:
        return None
    return (state.players, state.display, state.ship)


def _gate(pace: float) -> Any:
    """The motion gate: the table must stay still for the still part of a turn's pace
    (0.3 to 1 s, the service's own wait), so a quick demo is not slowed by the gate."""
    from vision.config import MotionConfig
    from vision.reader.motion import MotionGate

    return MotionGate(MotionConfig(still_seconds=min(1.0, max(0.3, pace * STILL_SHARE))))


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--game",
        default=DEFAULT_GAME,
        choices=game_keys(),
        help=f"which game the bots play ({DEFAULT_GAME})",
    )
    parser.add_argument(
        "--players",
        type=int,
        default=4,
        choices=range(2, 7),
        metavar="2-6",
        help="how many simulated players (4; Māori: 2-5)",
    )
    parser.add_argument("--seed", type=int, default=1, help="makes the game repeatable (1)")
    parser.add_argument(
        "--headless",
        action="store_true",
        help="no web server: play to the end and print the final scores",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the final scores as `companion score --json` does",
    )
    parser.add_argument(
        "--save-game",
        metavar="FILE",
        help="write the final boards in the `companion score` input format",
    )
    parser.add_argument("--state-dir", metavar="DIR", help="keep the game in DIR")
    parser.add_argument(
        "--pace",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"seconds between turns: hands over the table, then still (Māori: {PAGE_PACE:g} "
        f"with the page, {HEADLESS_PACE:g} of simulated time headless, a real table 20-60; "
        "the other games: 1 and 0)",
    )
    parser.add_argument("--pack", metavar="DIR", help="a tile pack (default: a drawn one)")
    parser.add_argument("--style", default="lagoon", help="art style of the drawn pack (lagoon)")
    parser.add_argument(
        "--side",
        choices=("front", "atoll"),
        default="front",
        help="the players' boards' side in play (front; the atoll: 2-4 players)",
    )
    parser.add_argument(
        "--variant",
        choices=[v.value for v in Variant],
        default="base",
        help="the rules: base, advanced (Fortgeschrittenenspiel) or pro (Profispiel) (base)",
    )
    parser.add_argument("--port", type=int, default=8080, help="web port (8080)")
    parser.add_argument("--cache", metavar="DIR", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    if args.game != DEFAULT_GAME:
        return _run_board_game(args)
    if args.players > 5:
        raise DataError("--players", "Māori is played by 2 to 5 players")
    from app.memory import tune_allocator

    tune_allocator()  # as `companion run` does: glibc's arenas capped, big frames given back
    if args.side == "atoll" and args.players > 4:
        raise DataError("--players", "the atoll side is played by at most 4 players")
    if args.pace is None:
        args.pace = HEADLESS_PACE if args.headless else PAGE_PACE
    if not 0 <= args.pace <= 3600:
        raise DataError("--pace", "give the seconds between turns, from 0 to 3600")
    save = Path(args.save_game) if args.save_game else None
    demo = Demo(args)
    server = None
    if not args.headless:
        server = _start_server(demo.session, args)
    try:
        final_state = demo.run()
    except KeyboardInterrupt:
        if server is not None:
            server.close()
        return 130
    finally:
        demo.reader.close()
    final = score_state(final_state)
    if save is not None:
        _write_game(save, final_state)
    if args.json:
        print(json.dumps(final.to_json(), indent=2))
    else:
        from app.score import render_table

        print(render_table(final))
        print(demo.tally.summary())
    if server is not None:
        _keep_serving(server)
    return 0


def _run_board_game(args: argparse.Namespace) -> int:
    """Bots play a whole game of Tongiaki or Giants through the table's BoardSession: with
    the phone pages (/games) following it live unless --headless, kept in --state-dir."""
    from app.board_games import check_players, play_through, score_text
    from companion.games.files import game_file

    check_players(args.game, args.players)
    if args.state_dir:
        board = BoardSession.resume(board_journal(args.state_dir))
        if board.damage is not None:
            print(
                f"The saved board game is damaged ({board.damage.problem}): a new one starts.",
                file=sys.stderr,
            )
    else:
        board = BoardSession()
    pace = args.pace if args.pace is not None else (0.0 if args.headless else 1.0)
    server = None
    if not args.headless:
        server = _start_server(Session(), args, board=board, page="games")
    stop = threading.Event()
    watch = threading.Thread(
        target=_follow_board, args=(board, stop), name="demo-progress", daemon=True
    )
    watch.start()
    try:
        game = play_through(board, args.game, args.players, args.seed, pace=pace)
    except KeyboardInterrupt:
        if server is not None:
            server.close()
        return 130
    finally:
        stop.set()
        watch.join()
    if args.save_game:
        text = json.dumps(game_file(game), ensure_ascii=False) + "\n"
        Path(args.save_game).write_text(text, "utf-8")
    print(score_text(game.score(), as_json=args.json))
    if server is not None:
        _keep_serving(server)
    return 0


#: Seconds between two lines of a board game's progress on the terminal.
BOARD_PROGRESS_EVERY = 2.0


def _follow_board(board: BoardSession, stop: threading.Event) -> None:
    """Show the bots' game on the terminal (standard error, when it is one) until `stop`:
    every BOARD_PROGRESS_EVERY seconds the moves made and the score so far."""
    shown = terminal_progress("playing:")
    if shown is None:
        return
    last: tuple[int, str] | None = None
    while True:
        stopped = stop.wait(BOARD_PROGRESS_EVERY)
        with board.lock:
            game = board.game
            now = None if game is None else (len(game.events), _board_scores(game))
        if now is not None and now != last:
            last = now
            shown.note(f"{game.title if game else ''} move {now[0]}; {now[1]}")
        if stopped:
            shown.finish()
            return


def _board_scores(game: Any) -> str:
    """Each player's points so far, in one short line."""
    return ", ".join(f"{p.name} {p.total}" for p in game.score().players)


def _keep_serving(server: Any) -> None:
    print("The game is over; the page stays up until Ctrl-C.", file=sys.stderr)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


def _start_server(
    session: Session,
    args: argparse.Namespace,
    *,
    board: BoardSession | None = None,
    page: str = "",
) -> Any:
    from companion.games.session import resume_board
    from web.app import create_app
    from web.serve import Server, announce
    from web.settings import WebSettings

    settings = WebSettings(port=args.port)
    if board is None and session.journal is not None:
        board = resume_board(session.journal.directory)
    app = create_app(
        session,
        settings,
        teach_unavailable="The demo's camera films a drawn table: teach your own box with "
        "`companion run` and the table's camera.",
        board=board,
    )
    server = Server(app, app.config["WEB_SETTINGS"])
    announce(
        server,
        app.config["WEB_SETTINGS"].pin if app.config.get("PIN_GENERATED") else None,
        sys.stdout,
    )
    if page:
        print(f"  The bots' game is on {server.url or server.local_url}{page}", flush=True)
    threading.Thread(target=server.run, name="web", daemon=True).start()
    return server


def _write_game(path: Path, state: GameState) -> None:
    from companion.scoring import PlayerBoard

    players = [
        PlayerBoard(
            p.name,
            p.shells,
            state.board_meanings(p),
            None if p.storage is None else state.catalogue.meaning(p.storage),
        )
        for p in state.players
    ]
    data = dump_game(state.layout, players, state.side)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
