"""``python -m agents.benchmark run ...`` (a method on a track) and ``python -m agents.benchmark aggregate ...`` (the tables)."""

from __future__ import annotations

import sys

from yacht_env.echo import echoed

USAGE = "usage: python -m agents.benchmark {run,aggregate} ... (--help after either for its options)"


def main(argv: list[str] | None = None) -> None:
    """Dispatch to the subcommand."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["-h"], ["--help"]):
        print(USAGE)
        return
    if not argv or argv[0] not in ("run", "aggregate"):
        sys.exit(f"{USAGE}: unknown command {echoed(argv[0])}" if argv else USAGE)
    if argv[0] == "run":
        from agents.benchmark.run import main as run
    else:
        from agents.benchmark.aggregate import main as run
    run(argv[1:])


if __name__ == "__main__":
    main()
