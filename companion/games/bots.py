"""A bot for every board game: it plays a random legal action, chosen by a seeded generator."""

from __future__ import annotations

import random
from collections.abc import Sequence

from companion.errors import CompanionError
from companion.games.base import Action, BoardGame


class RandomBot:
    """Chooses uniformly among the legal actions; the same seed plays the same game."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def choose(self, game: BoardGame) -> Action:
        actions = game.legal_actions()
        if not actions:
            raise CompanionError(f"{game.title}: the game waits for a move but offers none.")
        return self.rng.choice(actions)


def play_out(game: BoardGame, seed: int, max_moves: int = 100_000) -> BoardGame:
    """Let bots play `game` to its end through push, as a table's players would."""
    bot = RandomBot(seed)
    for _ in range(max_moves):
        if game.over:
            return game
        game.push(bot.choose(game))
    raise CompanionError(f"{game.title}: the bots did not finish within {max_moves} moves.")


def play_game(cls: type[BoardGame], names: Sequence[str], seed: int) -> BoardGame:
    """A whole game of `cls` between bots called `names`, set up and played from `seed`."""
    return play_out(cls.new(names, seed), seed)
