"""The registry of board games: keys to lazily imported classes."""

from __future__ import annotations

import importlib

import pytest

from companion.games import DEFAULT_GAME, GAMES, UnknownGame, game_class, game_keys
from companion.games.tongiaki import Tongiaki


def test_tongiaki_is_registered_by_its_key() -> None:
    assert game_class("tongiaki") is Tongiaki
    assert "tongiaki" in game_keys() and game_keys()[0] == DEFAULT_GAME == "maori"


def test_every_entry_names_a_class_whose_key_is_its_own() -> None:
    for key, target in GAMES.items():
        module, _, name = target.partition(":")
        assert getattr(importlib.import_module(module), name).key == key


@pytest.mark.parametrize("key", ["chess", "maori", ""])
def test_an_unknown_game_is_one_sentence(key: str) -> None:
    with pytest.raises(UnknownGame) as raised:
        game_class(key)
    assert raised.value.message.endswith(".") and "tongiaki" in raised.value.message
