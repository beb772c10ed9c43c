// locator.evaluate: scroll an element's content by most of its size, up, down, left or
// right. Returns whether it moved (an element at that end, or with nothing to scroll, does not).
(element, direction) => {
  const before = [element.scrollLeft, element.scrollTop];
  const horizontal = direction === "left" || direction === "right";
  const size = horizontal ? element.clientWidth : element.clientHeight;
  const step = Math.max(size * 0.8, 40) * (direction === "up" || direction === "left" ? -1 : 1);
  element.scrollBy(horizontal ? step : 0, horizontal ? 0 : step);
  return element.scrollLeft !== before[0] || element.scrollTop !== before[1];
}
