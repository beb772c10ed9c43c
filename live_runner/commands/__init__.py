"""The live verbs of ``webagent`` (``run``, ``miniwob``, ``browsergym``, ``live-export``), one
module each, declared as ``webagent.commands`` entry points."""
