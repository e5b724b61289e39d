"""``yacht serve``: Yacht in the browser against agents, every decision kept in a database.

``games`` (the game logic a server runs, on the project's ``Match``), ``sheets`` (what a page sees of
the rules and a score sheet), ``app`` (the HTTP routes), ``pages`` (the pages the server writes itself),
``static/`` (the pages: plain HTML, CSS and JavaScript), ``cli`` (``yacht serve``, ``yacht export``,
``yacht import``), ``local_server`` (``yacht serve`` in a subprocess, for benchmarks, examples and tests).
Its games are kept in :mod:`yacht_play.store`. Needs the ``serve`` extra.
"""
