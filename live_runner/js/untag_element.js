// Runtime.callFunctionOn: remove the token attribute set by tag_element.js.
function (attribute) {
  const element = this.nodeType === Node.ELEMENT_NODE ? this : this.parentElement;
  if (element) {
    element.removeAttribute(attribute);
  }
  return true;
}
