// locator.evaluate on a native <select>: the index of the option a person would mean by
// `wanted` (its text, then its value, then case-insensitive text, then text containing it),
// or -1 with the option texts so the agent can be told what exists.
(select, wanted) => {
  const norm = (s) => (s || "").replace(/\s+/g, " ").trim();
  const options = Array.from(select.options);
  const texts = options.map((o) => norm(o.textContent));
  const target = norm(wanted);
  const lower = target.toLowerCase();
  const tests = [
    (o, t) => t === target,
    (o, t) => o.value === wanted,
    (o, t) => t.toLowerCase() === lower,
    (o, t) => lower.length > 0 && t.toLowerCase().includes(lower),
  ];
  for (const test of tests) {
    const index = options.findIndex((o, i) => !o.disabled && test(o, texts[i]));
    if (index >= 0) {
      return { index: index, options: texts };
    }
  }
  return { index: -1, options: texts };
}
