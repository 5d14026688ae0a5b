// Exports of the open video: a button that asks for a signed evidence bundle (faces and/or text
// redacted when ticked), its state while the export-evidence flow makes it, then the bundle's
// sha256 and a download (with the key).
import { $, api, authHeaders, el, postJson } from "./api.js";
import { decorateSpans } from "./evidence.js";

let watching = null; // the export being followed; a newer one (or another video) stops it

function showState(exportDoc) {
  const parts = [`Export ${exportDoc.export_id}: ${exportDoc.state}`];
  const redacted = exportDoc.selection?.redact ?? [];
  if (redacted.length) parts.push(`${redacted.join(" and ")} redacted`);
  const { start_s: start, end_s: end } = exportDoc.selection ?? {};
  if (start != null || end != null) parts.push(`${start ?? 0}-${end ?? "end"} s`);
  if (exportDoc.error) parts.push(`${exportDoc.error.code}: ${exportDoc.error.message}`);
  if (exportDoc.bundle) {
    parts.push(`${exportDoc.bundle.bytes} bytes, sha256 ${exportDoc.bundle.sha256}`);
    parts.push(`signed by ${exportDoc.bundle.signing_key_id}`);
  }
  $("export-state").textContent = parts.join(" · ");
  $("export-state").dataset.state = exportDoc.state;
}

async function offerDownload(exportDoc) {
  const response = await fetch(exportDoc.bundle.download_url, { headers: authHeaders() });
  if (!response.ok) throw new Error(`bundle HTTP ${response.status}`);
  const link = el("a", `Download ${exportDoc.export_id}.zip`, "download");
  link.href = URL.createObjectURL(await response.blob());
  link.download = `${exportDoc.export_id}.zip`;
  $("export-download").replaceChildren(link);
  $("export-check").hidden = false;
}

/** The time range typed in, as the request's start_s / end_s (each only when given). */
function range() {
  const picked = {};
  for (const [id, field] of [["export-start", "start_s"], ["export-end", "end_s"]]) {
    const value = $(id).value.trim();
    if (value !== "") picked[field] = Number(value);
  }
  return picked;
}

async function follow(videoId, exportDoc) {
  const url = `/api/product/videos/${encodeURIComponent(videoId)}/exports/${exportDoc.export_id}`;
  let current = exportDoc;
  while (watching === exportDoc.export_id && !["succeeded", "failed"].includes(current.state)) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    current = await api(url);
    if (watching === exportDoc.export_id) showState(current);
  }
  if (watching === exportDoc.export_id && current.bundle) {
    await offerDownload(current);
    offerClips(videoId, current);
  }
}

/** Whether the export's selection holds the span drawn as `item` (the rule of the API). */
function selects(selection, item) {
  if (selection.evidence_ids?.length) return selection.evidence_ids.includes(item.dataset.evidenceId);
  const start = Number(item.dataset.startS), end = Number(item.dataset.endS);
  return (selection.start_s == null || end >= selection.start_s)
    && (selection.end_s == null || start <= selection.end_s);
}

/** A "clip" link on every exported span (drawn now or once its group opens): its MP4 as the
 * bundle holds it (the single-clip download), carrying the same Content Credentials. */
function offerClips(videoId, exportDoc) {
  document.querySelectorAll("#evidence a.clip").forEach((a) => a.remove());
  const base = `/api/product/videos/${encodeURIComponent(videoId)}/exports/${exportDoc.export_id}`;
  decorateSpans((item) => {
    if (!selects(exportDoc.selection ?? {}, item)) return;
    const evidenceId = item.dataset.evidenceId;
    const link = el("a", "clip", "clip");
    link.href = "#";
    link.title = `The MP4 clip of ${evidenceId} from export ${exportDoc.export_id}`;
    link.addEventListener("click", async (event) => {
      event.preventDefault();
      const response = await fetch(`${base}/clips/${evidenceId}`, { headers: authHeaders() });
      if (!response.ok) { link.textContent = `clip: HTTP ${response.status}`; return; }
      const save = el("a");
      save.href = URL.createObjectURL(await response.blob());
      save.download = `${evidenceId}.mp4`;
      save.click();
    });
    item.querySelector(".span-head").append(" ", link);
  });
}

/** Reset the export panel for `videoId` (a newly opened video). */
export function resetExport(videoId) {
  watching = null;
  decorateSpans(null);
  $("export-state").textContent = "";
  $("export-download").replaceChildren();
  $("export-check").hidden = true;
  $("export-button").dataset.videoId = videoId;
}

$("export-button").addEventListener("click", async () => {
  const videoId = $("export-button").dataset.videoId;
  if (!videoId) return;
  $("export-download").replaceChildren();
  try {
    const path = `/api/product/videos/${encodeURIComponent(videoId)}/exports`;
    const ticked = document.querySelectorAll("#export-redact input[name=redact]:checked");
    const redact = Array.from(ticked, (box) => box.value);
    const queued = await postJson(path, { ...(redact.length ? { redact } : {}), ...range() });
    watching = queued.export_id;
    showState(queued);
    await follow(videoId, queued);
  } catch (error) {
    $("export-state").textContent = error.message;
  }
});
