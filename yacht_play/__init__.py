"""People at the table: terminal play, game records, and grading decisions against the optimum.

- :mod:`~yacht_play.terminal`: ``yacht play`` / ``python -m yacht_play``, the prompt loop;
- :mod:`~yacht_play.commands`: what a person types, turned into actions;
- :mod:`~yacht_play.match`: seats, turn order and the record of every decision (no terminal I/O);
- :mod:`~yacht_play.records`: the JSON-lines game record format;
- :mod:`~yacht_play.analyze`: ``yacht analyze``, expected points lost per decision.

Nothing here imports ``agents`` (the DP, trained models) until a game or an analysis needs it.
"""
