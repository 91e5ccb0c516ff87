"""The games themselves. Māori: tiles, boards, the rules engine, scoring, bots, the turn
tracker, the live Session and its journal; Tongiaki and Giants in `companion.games`, each
with the board-game session that saves and replays it.

This package is a plain library: it imports neither OpenCV, Flask nor gpiozero. The vision,
hardware and web packages are adapters around it, wired together in app/.
"""

__version__ = "0.1.0"
