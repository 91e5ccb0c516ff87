"""The phone pages: the live table for everyone and the host's screens, over a JSON API.

`web.app.create_app(session, settings)` builds the Flask app around one
`companion.session.Session`; `web.serve.serve(app, settings)` runs it with waitress on the
LAN, shows a QR code and advertises NAME.local. Pages follow the game live over Server-Sent
Events (`web.sse`); only the host, logged in with the PIN, may change anything (`web.auth`).
Host requests are checked and turned into Session calls in `web.forms`; each resource's
routes are one blueprint in `web.api` (the game, turns, corrections, the camera, teaching a
box, the board games, the event streams); every tunable is in `web.settings`.
"""
