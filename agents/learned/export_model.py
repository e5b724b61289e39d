"""Convert a MaskablePPO zip saved by train.py into an inference model file (``.safetensors``).

    python -m agents.learned.export_model runs/quick/model.zip runs/quick/model.safetensors

The zip is loaded with stable-baselines3, which unpickles parts of it and can run code from it:
convert only zips you trust (your own runs). The file written holds only tensors and plain
metadata (:mod:`agents.learned.model_files`), is played as ``ppo:PATH`` and is safe to share.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.learned.model_files import SUFFIX, ModelLoadError, export_model, load_model_file
from yacht_env.atomic_files import OutputError, check_outputs


def main(argv=None) -> int:
    """Run the command line: export the model in ``argv``, read it back, and return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m agents.learned.export_model", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("zip", metavar="MODEL.zip", help="a MaskablePPO model saved by train.py (you trust it)")
    parser.add_argument("out", nargs="?", metavar=f"OUT{SUFFIX}", help=f"where to write (default: next to the zip, {SUFFIX})")
    args = parser.parse_args(argv)
    out = Path(args.out) if args.out else Path(args.zip).with_suffix(SUFFIX)
    if out.suffix != SUFFIX:
        parser.error(f"the output file must end in {SUFFIX}, got {str(out)!r}")
    try:
        check_outputs([out])  # a folder, FIFO or device: refused before loading the zip, not after
    except OutputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    from agents.learned.ppo import load_sb3_model

    try:
        export_model(load_sb3_model(args.zip), out)
        load_model_file(out)  # read back: every field and tensor checked
    except (ModelLoadError, ValueError, OutputError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
