"""The Māori game itself: tiles, boards, the rules engine, scoring and the turn tracker.

This package is a plain library: it imports neither OpenCV, Flask nor gpiozero. The vision,
hardware and web packages are adapters around it, wired together in app/.
"""

__version__ = "0.1.0"
