"""Every registered agent as a BrowserGym agent: MiniWoB++, WebArena, WorkArena, AssistantBench.

A commands-layer package, like :mod:`live_runner`: it composes the agents and reuses the live
runner's traces, viewer and Mind2Web export. Importing it imports no browser library and no
BrowserGym; those load only when an agent or an episode is made
(``pip install 'readagent-web[browsergym]'``). Entry points:

* :class:`live_runner.browsergym.agent.BrowserGymAgent` — any :class:`webagent.contracts.Agent` as
  a BrowserGym ``Agent`` (``obs_preprocessor``, ``get_action``, ``action_set``).
* :class:`live_runner.browsergym.agent_args.WebAgentArgs` — BrowserGym's/AgentLab's
  ``AbstractAgentArgs`` for it, built from a :class:`webagent.config.RunConfig`.
* :func:`live_runner.browsergym.runner.run_episodes` — episodes of BrowserGym tasks, traced like
  ``webagent run``; CLI ``webagent browsergym``.
* :func:`live_runner.browsergym.observation.page_from_obs` and
  :func:`live_runner.browsergym.actions.to_browsergym` — the pure translations in both directions.
"""
