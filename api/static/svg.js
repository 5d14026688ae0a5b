// SVG built with DOM APIs (createElementNS): no markup strings, so no user text is ever parsed.
const NS = "http://www.w3.org/2000/svg";

export function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

export function titled(node, text) {
  node.append(svg("title", {}, text));
  return node;
}
