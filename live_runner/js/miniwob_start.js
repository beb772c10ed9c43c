// page.evaluate on a MiniWoB++ task page: seed its random generator, set the episode clock
// and start an episode (what the sync cover's click would do).
([seed, maxMs]) => {
  Math.seedrandom(seed);
  core.EPISODE_MAX_TIME = maxMs;
  core.startEpisodeReal();
  return true;
}
