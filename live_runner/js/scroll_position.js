// page.evaluate: the page's scroll position, [x, y].
() => [window.scrollX, window.scrollY]
