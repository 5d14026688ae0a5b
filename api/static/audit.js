// A video's audit trail: who read or wrote it, what, when, from where, and the answer's status.
import { $, api, el } from "./api.js";

function auditRow(record) {
  const row = el("tr");
  const ids = Object.entries(record.ids || {})
    .map(([name, value]) => `${name} ${Array.isArray(value) ? value.join(", ") : value}`)
    .join("; ");
  row.append(
    el("td", record.at),
    el("td", record.key_id),
    el("td", record.action),
    el("td", ids || "—"),
    el("td", record.outcome, record.outcome < 400 ? "ok" : "error"),
    el("td", record.client ?? "—"),
  );
  row.title = `seq ${record.seq}, hash ${record.hash}`;
  return row;
}

/** Fill the audit table with the video's newest records and the chain's head. */
export async function showAudit(videoId) {
  const path = `/api/product/videos/${encodeURIComponent(videoId)}/audit?limit=50`;
  try {
    const page = await api(path);
    $("audit-rows").replaceChildren(...page.data.map(auditRow));
    const head = page.chain_head;
    $("audit-head").textContent = `Chain head: seq ${head.seq}, ${head.hash}`;
  } catch (error) {
    $("audit-head").textContent = error.message;
  }
}
