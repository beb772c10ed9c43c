// page.evaluate on a MiniWoB++ task page: seed its random generator, set the episode clock
// and start an episode (what the sync cover's click would do). The countdown on the page
// ("Time left: 59 / 60sec") is stopped (it shows "-"; the episode clock still runs), so that
// the page an agent reads does not depend on when it reads it: an episode replayed from its
// seed shows the same pages (request rounds, live_runner/rounds.py).
([seed, maxMs]) => {
  Math.seedrandom(seed);
  core.EPISODE_MAX_TIME = maxMs;
  core.startEpisodeReal();
  core.clearTimer();
  return true;
}
