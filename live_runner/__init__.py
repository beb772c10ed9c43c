"""Drive a real browser with a web agent: observe, act, stay safe, trace, run MiniWoB++.

Importing this package starts nothing and imports no browser library; Playwright is loaded
only when a session is opened. Public entry points:

* :func:`live_runner.observe.observe` — a page snapshot whose elements carry CDP
  ``backendNodeId`` values as ``backend_node_id`` attributes.
* :class:`live_runner.executor.Executor` — perform a :class:`live_runner.actions.LiveAction`
  and report an :class:`live_runner.actions.ActionOutcome`, never raising for page failures.
* :mod:`live_runner.episode` — the one observe → agent → act loop, with limits and traces,
  for every environment: a browser tab (:func:`live_runner.tab.run_task`), MiniWoB++
  (:func:`live_runner.miniwob.run_miniwob`), BrowserGym
  (:func:`live_runner.browsergym.environment.run_browsergym`); tasks × seeds by
  :mod:`live_runner.suite`.
* :mod:`live_runner.commands` — ``webagent run | miniwob | browsergym | live-export``.
"""
