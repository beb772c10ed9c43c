// page.evaluate on a MiniWoB++ task page: the episode's state, read from its globals.
() => ({
  ready: typeof WOB_TASK_READY === "undefined" ? true : Boolean(WOB_TASK_READY),
  done: Boolean(WOB_DONE_GLOBAL),
  reward: Number(WOB_REWARD_GLOBAL),
  raw_reward: Number(WOB_RAW_REWARD_GLOBAL),
  reason: WOB_REWARD_REASON === null ? null : String(WOB_REWARD_REASON),
  utterance: core.getUtterance(),
})
