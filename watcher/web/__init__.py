"""The read-only status pages: `/` (the matrix), `/runs/<id>`, `/deprecations` and `/api/status`.

`overview.py`, `run_page.py` and `deprecations.py` read the state into plain dataclasses; `app.py` renders
them with autoescaping Jinja2 templates; `access.py` decides who may see them.
"""
