// locator.evaluate: whether clicking this element (or pressing Enter in it) submits a form.
// Returns the form's target URL when it does, null otherwise.
(element, pressEnter) => {
  const tag = element.tagName.toLowerCase();
  let form = null;
  if (pressEnter) {
    if ((tag === "input" || tag === "select") && element.form) {
      form = element.form;
    }
  } else {
    const control = element.closest("button, input[type=submit], input[type=image]");
    if (control && control.form) {
      const type = (control.getAttribute("type") || "submit").toLowerCase();
      if (type === "submit" || type === "image") {
        form = control.form;
      }
    }
  }
  if (!form) {
    return null;
  }
  return form.action || document.location.href;
}
