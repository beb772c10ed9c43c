// locator.evaluate on an input that cannot be filled (a range slider): set its value and
// send the input and change events its own use would.
(element, value) => {
  element.value = value;
  element.dispatchEvent(new Event("input", { bubbles: true }));
  element.dispatchEvent(new Event("change", { bubbles: true }));
  return element.value;
}
