"""The population report, how the agents compare with the people who played them: its computation from the finished
games of a serve database (:mod:`~yacht_play.report.build`, with each person's skill, each policy's likeness to the
people and one rating scale), its typed results, and its outputs (plain text, the server's ``/report`` page with
inline SVG charts, CSV and LaTeX tables, JSON, a PNG plot) and the ``yacht report`` command. It stands above the
game records, the store, the grader (:mod:`yacht_play.coach`), ``yacht_env`` and ``agents``, and may import them;
the server (:mod:`yacht_play.serve`) and the ``yacht`` command (:mod:`yacht_play.cli`) stand above it and import it,
never the other way round.
"""
