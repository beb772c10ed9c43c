// locator.evaluate: scroll an element's content by most of its height, up or down.
(element, direction) => {
  const step = Math.max(element.clientHeight * 0.8, 40);
  element.scrollBy(0, direction === "up" ? -step : step);
  return element.scrollTop;
}
