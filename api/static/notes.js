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

/** The notes list, the span's verdict badge and the form, for a span of `videoId`'s view. */
export function spanNotes(videoId, span) {
  const badge = el("span");
  showVerdict(badge, span.verdict);
  const list = el("ul", undefined, "notes");
  list.append(...(span.review_notes || []).map(noteItem));
  const path = `/api/product/videos/${encodeURIComponent(videoId)}/evidence/`
    + `${encodeURIComponent(span.evidence_id)}/notes`;
  const form = noteForm(async (body) => {
    const note = await postJson(path, body);
    list.append(noteItem(note));
    showVerdict(badge, note.verdict);
  });
  return { badge, list, form };
}
