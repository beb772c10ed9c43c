"""Moved to :mod:`live_runner.browsergym` (BrowserGym is a live environment, beside the
others); ``webagent.browsergym`` and its modules keep working until 0.3."""

import sys

from webagent._moved import alias

sys.modules[__name__] = alias(__name__)
