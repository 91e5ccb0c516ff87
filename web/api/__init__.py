"""The app's routes, one module per resource (OctoPrint's server/api layout).

`common` holds what every route shares: the table the app serves (`Table`, kept in
`app.extensions`), the host check, the request body and the error type. Each other module is
a Flask blueprint: `pages` (the table and host pages, the snapshot and QR code), `events`
(the Server-Sent Events stream), `host` (logging in and out), `game` (the state, a new game,
undo, resuming a damaged game), `turns` (a turn entered, previewed, confirmed or dismissed),
`corrections` (a cell of the last read corrected), `camera` (settling its exposure) and
`errors` (every error as one sentence, and the security headers).
"""
