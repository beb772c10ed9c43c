"""``webagent sweep``: every (agent, budget) cell as a normal evaluation folder, then one table,
one plot of accuracy against tokens per step, an HTML summary and JSON.

- :mod:`.spec`: what a sweep is (agents × budgets over one dataset) and its folder layout;
- :mod:`.run`: runs (or resumes) the cells through :func:`mind2web_eval.runner.run_eval`;
- :mod:`.table`: one row per cell from the cell's ``results.json`` (no model needed);
- :mod:`.outputs`: the table, PNG, HTML and JSON written from those rows.
"""

from mind2web_eval.sweep.spec import SweepSpec

__all__ = ["SweepSpec"]
