"""The method's own stages, after segmentation (:mod:`webagent.html`) and gists
(:mod:`webagent.gist`): the gist memory fitted to a budget (:mod:`.memory`, its sections when
the gists do not all fit, :mod:`.levels`), the look-up that reopens fragments
(:mod:`.lookup`), the retrieval that ranks them for the baselines and the look-up's free
slots (:mod:`.retrieval`), and the act step that predicts the action (:mod:`.act`).
The agents (:mod:`webagent.agents`) compose them."""
