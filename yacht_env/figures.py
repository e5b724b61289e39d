"""Figures as PNG files: drawn without a display, written atomically (a crash leaves the old file or the new one)."""

from __future__ import annotations


def pyplot():
    """The ``pyplot`` of matplotlib, on the Agg backend (which needs no display)."""
    import matplotlib

    matplotlib.use("Agg")
    # Labels hold names people typed: "$...$" in one is a name, not mathtext (a bad formula stopped the save).
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot as plt

    return plt


def save_png(path, figure, dpi: int) -> None:
    """Lay ``figure`` out, write it to ``path`` as a PNG at ``dpi``, atomically, and close it."""
    from yacht_env.atomic_files import write_atomically

    figure.tight_layout()
    write_atomically(path, lambda handle: figure.savefig(handle, format="png", dpi=dpi))
    pyplot().close(figure)
