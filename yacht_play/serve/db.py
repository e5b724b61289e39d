"""The old name of :mod:`yacht_play.store`, the database of games: the same module, with a deprecation warning.

The store moved below the server so that the server, the report and the simulated people all stand on it,
and nothing outside :mod:`yacht_play.serve` imports from the server.
"""

import sys
import warnings

from yacht_play import store

warnings.warn("yacht_play.serve.db is now yacht_play.store; import it from there", DeprecationWarning, stacklevel=2)
# One module under both names, so that its state (the group committers) and any patch of it are shared.
sys.modules[__name__] = store
