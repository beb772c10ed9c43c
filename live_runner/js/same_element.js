// elementHandle.evaluate: whether two handles point at the same element.
(a, b) => a === b
