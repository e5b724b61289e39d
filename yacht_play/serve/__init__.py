"""``yacht serve``: Yacht in the browser against agents, every decision kept in a database.

``db`` (the schema and its migrations), ``games`` (the game logic a server runs, on the project's
``Match``), ``app`` (the HTTP routes), ``static/`` (the pages: plain HTML, CSS and JavaScript),
``cli`` (``yacht serve``, ``yacht export``, ``yacht import``). Needs the ``serve`` extra.
"""
