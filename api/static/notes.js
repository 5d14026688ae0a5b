// Review notes of one evidence span: people's notes with their verdicts, and a form that adds
// one (POST .../evidence/{id}/notes) and shows it at once. Notes are never edited: a new note
// supersedes the span's previous one, and the newest note's verdict is the span's.
import { el, postJson } from "./api.js";

const VERDICTS = ["confirmed", "rejected", "needs_review"];

function noteItem(note) {
  if (!note.verdict) return el("li", `${note.author}: ${note.text}`, "note system");
  const item = el("li", undefined, "note person");
  item.dataset.noteId = note.note_id;
  item.append(
    el("span", note.verdict.replace("_", " "), `verdict ${note.verdict}`),
    el("span", ` ${note.author} (${note.created_at}): `),
    el("span", note.text, "note-text"),
  );
  return item;
}

function showVerdict(badge, verdict) {
  badge.textContent = verdict ? verdict.replace("_", " ") : "not reviewed";
  badge.className = `verdict ${verdict || "none"}`;
}

function noteForm(onSubmit) {
  const form = el("form", undefined, "note-form");
  const text = el("input");
  Object.assign(text, { name: "text", required: true, maxLength: 2000, placeholder: "Review note" });
  const verdict = el("select");
  verdict.name = "verdict";
  for (const v of VERDICTS) {
    const option = el("option", v.replace("_", " "));
    option.value = v;
    verdict.append(option);
  }
  const status = el("span", undefined, "note-status");
  form.append(text, verdict, el("button", "Add note"), status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    status.textContent = "Saving…";
    try {
      await onSubmit({ text: text.value, verdict: verdict.value });
      form.reset();
      status.textContent = "";
    } catch (error) {
      status.textContent = error.message;
    }
  });
  return form;
}

/** The span's verdict badge ("not reviewed" without a person's note). */
export function verdictBadge(span) {
  const badge = el("span");
  showVerdict(badge, span.verdict);
  return badge;
}

/** The notes list and the form of a span of `videoId`'s view; a note added goes into the list,
 * into `span` (so the span drawn again shows it) and into the span's `badge`. */
export function spanNotes(videoId, span, badge) {
  const list = el("ul", undefined, "notes");
  list.append(...(span.review_notes || []).map(noteItem));
  const path = `/api/product/videos/${encodeURIComponent(videoId)}/evidence/`
    + `${encodeURIComponent(span.evidence_id)}/notes`;
  const form = noteForm(async (body) => {
    const note = await postJson(path, body);
    span.review_notes = [...(span.review_notes || []), note];
    span.verdict = note.verdict;
    list.append(noteItem(note));
    showVerdict(badge, note.verdict);
  });
  return { list, form };
}
