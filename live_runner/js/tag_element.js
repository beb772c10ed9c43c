// Runtime.callFunctionOn on a node resolved from its backendNodeId: `this` is the node.
// Tags the element with a one-off token so a Playwright locator can find it in its frame,
// and reports whether it is still in the document.
function (attribute, token) {
  const element = this.nodeType === Node.ELEMENT_NODE ? this : this.parentElement;
  if (!element) {
    return { connected: false, tag: "", editable: false };
  }
  element.setAttribute(attribute, token);
  const tag = element.tagName.toLowerCase();
  const editable =
    tag === "textarea" ||
    element.isContentEditable ||
    (tag === "input" &&
      !["checkbox", "radio", "submit", "button", "image", "reset", "file", "hidden"].includes(
        (element.getAttribute("type") || "text").toLowerCase()
      ));
  return { connected: element.isConnected, tag: tag, editable: editable };
}
