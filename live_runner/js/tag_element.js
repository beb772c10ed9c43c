// Runtime.callFunctionOn on a node resolved from its backendNodeId: `this` is the node.
// Tags the element with a one-off token so a Playwright locator can find it in its frame,
// and reports whether it is still in the document and what kind of control it is.
function (attribute, token) {
  const element = this.nodeType === Node.ELEMENT_NODE ? this : this.parentElement;
  if (!element) {
    return { connected: false, tag: "", editable: false };
  }
  element.setAttribute(attribute, token);
  const tag = element.tagName.toLowerCase();
  const type = tag === "input" ? (element.getAttribute("type") || "text").toLowerCase() : "";
  const editable =
    tag === "textarea" ||
    element.isContentEditable ||
    (tag === "input" &&
      !["checkbox", "radio", "submit", "button", "image", "reset", "file", "hidden"].includes(type));
  return {
    connected: element.isConnected,
    tag: tag,
    type: type,
    editable: editable,
    readonly: Boolean(element.readOnly) && !element.isContentEditable,
    disabled: Boolean(element.disabled),
    multiple: Boolean(element.multiple),
  };
}
