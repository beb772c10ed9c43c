"""Offline Mind2Web evaluation: load the data in any circulating form, run an agent over it
resumably, score it exactly like the official code, and report.

Modules (imported on use; importing this package loads nothing heavy):

* :mod:`mind2web_eval.metrics` — the official formulas as small pure functions;
* :mod:`mind2web_eval.records`, :mod:`mind2web_eval.data` — typed records and lazy loading;
* :mod:`mind2web_eval.scoring`, :mod:`mind2web_eval.aggregate` — per-step scores under an
  explicit protocol, micro/macro averages, breakdowns, bootstrap intervals;
* :mod:`mind2web_eval.runner`, :mod:`mind2web_eval.store`, :mod:`mind2web_eval.manifest` —
  ``webagent eval``: bounded concurrency, an append-only result store, run manifests;
* :mod:`mind2web_eval.diagnostics` — look-up recall, error classes, tokens, latency;
* :mod:`mind2web_eval.report` — terminal tables, ``results.json``, the HTML report, compare;
* :mod:`mind2web_eval.commands` — ``webagent score | eval | compare | demo | sweep``, one
  module a verb.
"""
