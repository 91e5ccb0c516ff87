"""The phone pages and JSON API (Flask served by waitress); filled by the live-companion issue."""
