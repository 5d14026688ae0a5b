// The object a reviewer is looking at, shared by the parts of a video's page: a click on a box,
// a timeline lane or an evidence span selects it, and each part marks its own view of it (the
// box on the video, the lane, the evidence group). Selecting is by object id; the parts ask the
// page's objects (setObjects) for an object's identity, so one person's appearances go together.
const listeners = [];
let objects = new Map(); // object id -> scene-graph object of the open video
let current = null;

/** The open video's scene-graph objects (replaces the previous video's). */
export function setObjects(list) {
  objects = new Map(list.map((o) => [o.object_id, o]));
  current = null;
}

export function objectOf(objectId) {
  return objects.get(objectId) || null;
}

/** The key an object is grouped by: its identity, else itself. */
export function thingOf(objectId) {
  const obj = objects.get(objectId);
  return obj ? obj.identity_id || obj.object_id : objectId;
}

/** Every object id of the thing `objectId` is (all appearances of its identity). */
export function appearancesOf(objectId) {
  const thing = thingOf(objectId);
  return [...objects.values()].filter((o) => (o.identity_id || o.object_id) === thing)
    .map((o) => o.object_id);
}

export function selectedObject() {
  return current;
}

/** Select `objectId` (null: nothing); `source` names the part that asked, so it need not
 * redraw itself twice. */
export function selectObject(objectId, source = null) {
  current = objectId;
  for (const listener of listeners) listener(objectId, source);
}

export function onSelect(listener) {
  listeners.push(listener);
}
