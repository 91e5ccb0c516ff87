"""`python -m app`: the same as the `companion` command."""

from app.cli import main

raise SystemExit(main())
