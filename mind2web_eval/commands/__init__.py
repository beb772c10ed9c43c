"""The evaluation verbs of ``webagent`` (``score``, ``eval``, ``compare``, ``demo``,
``sweep``), one module each, declared as ``webagent.commands`` entry points."""
