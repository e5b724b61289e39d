"""Join planN files into one: each table size played by the network of the first file that learned it.

    python -m agents.learned.join_planN OUT.safetensors runs/planN_yacht_two/model.safetensors runs/planN_yacht/model.safetensors

A planN run trains one network for the table sizes of its config (``plan.table_sizes``). A network of its own for a
table size can play it better than one shared with the other sizes (``docs/playing-to-win.md``), so a shipped
``planN:<rules>`` file may hold several: this command writes them into one file. The files are read and checked
as any planN file (nothing in them is executed); they must be of one rule set, and either all have a lead prior on
the same points to come or none has. A network keeps the table sizes no file before it took; one left with none
is refused, as is an output that is not a ``.safetensors`` file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.learned.model_files import SUFFIX, ModelLoadError
from agents.learned.planN_files import PlanNNetwork, read_planN_file, write_planN_networks
from yacht_env.atomic_files import OutputError, check_outputs
from yacht_env.echo import echoed_path


def joined_networks(paths) -> tuple[str, list[PlanNNetwork]]:
    """The rule set and the networks of the files at ``paths``, each keeping the table sizes no earlier one took;
    ``ModelLoadError`` (one line) naming the file that does not fit.
    """
    rules, taken, networks = None, set[int](), []
    for path in paths:
        meta, read = read_planN_file(path)
        if rules is not None and meta["rules"] != rules:
            raise ModelLoadError(f"planN file {echoed_path(path)} is of the {meta['rules']} rules, the first of {rules}")
        rules = meta["rules"]
        for network in read:
            sizes = tuple(size for size in network.table_sizes if size not in taken)
            if not sizes:
                raise ModelLoadError(
                    f"planN file {echoed_path(path)}: its network for tables of {', '.join(map(str, network.table_sizes))} "
                    "adds no table size that an earlier file has not"
                )
            taken.update(sizes)
            networks.append(network._replace(table_sizes=sizes))
    if rules is None:
        raise ModelLoadError("no planN file to join")
    return rules, networks


def main(argv=None) -> int:
    """Run the command line: join the files of ``argv``, read the result back, and return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m agents.learned.join_planN", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", metavar=f"OUT{SUFFIX}", help="the planN file to write")
    parser.add_argument("files", nargs="+", metavar=f"FILE{SUFFIX}", help="planN files, the first taking each table size first")
    args = parser.parse_args(argv)
    out = Path(args.out)
    if out.suffix != SUFFIX:
        parser.error(f"the output file must end in {SUFFIX}, got {echoed_path(out)}")
    try:
        check_outputs([out])
        rules, networks = joined_networks(args.files)
        write_planN_networks(out, networks, rules)
        read_planN_file(out)  # read back: every field and tensor checked
    except (ModelLoadError, OutputError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for network in networks:
        sizes = ", ".join(map(str, network.table_sizes))
        print(f"tables of {sizes}: a network of {network.games:,} games")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
