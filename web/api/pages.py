"""The pages: the table (every phone), the host page, the camera's snapshot and the QR code.

They are routes of the app itself, not of a blueprint: templates name them `table`,
`host_page` and `qr_png` (url_for), as the games' pages do."""

from __future__ import annotations

import io

from flask import Flask, Response, abort, render_template

from web import auth
from web.api.common import public_url, qr_svg, state, table


def table_page() -> str:
    return render_template("table.html", state=state(), host_page=False)


def host_page() -> str:
    return render_template(
        "host.html",
        state=state(),
        host_page=True,
        csrf=auth.csrf_token(),
        qr=qr_svg(public_url()),
        url=public_url(),
    )


def snapshot() -> Response:
    data = table().session.camera.snapshot
    if data is None:
        abort(404)
    response = Response(data, mimetype="image/jpeg")
    response.headers["Cache-Control"] = "no-store"
    return response


def qr_png() -> Response:
    import segno

    buffer = io.BytesIO()
    segno.make(public_url(), error="m").save(buffer, kind="png", scale=8, border=2)
    response = Response(buffer.getvalue(), mimetype="image/png")
    response.headers["Cache-Control"] = "no-store"
    return response


def register(app: Flask) -> None:
    """Add the pages to `app` under their endpoint names."""
    app.add_url_rule("/", "table", table_page, methods=["GET"])
    app.add_url_rule("/host", "host_page", host_page, methods=["GET"])
    app.add_url_rule("/snapshot.jpg", "snapshot", snapshot, methods=["GET"])
    app.add_url_rule("/qr.png", "qr_png", qr_png, methods=["GET"])
