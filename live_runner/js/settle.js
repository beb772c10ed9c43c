// page.evaluate: resolve once the DOM has been quiet for `quietMs`, or after `timeoutMs`.
// Returns how many milliseconds it waited.
([quietMs, timeoutMs]) =>
  new Promise((resolve) => {
    const start = performance.now();
    let timer = null;
    const done = () => {
      observer.disconnect();
      clearTimeout(timer);
      clearTimeout(limit);
      resolve(Math.round(performance.now() - start));
    };
    const observer = new MutationObserver(() => {
      clearTimeout(timer);
      timer = setTimeout(done, quietMs);
    });
    observer.observe(document.documentElement || document, {
      subtree: true,
      childList: true,
      attributes: true,
      characterData: true,
    });
    timer = setTimeout(done, quietMs);
    const limit = setTimeout(done, timeoutMs);
  })
