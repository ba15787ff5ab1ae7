// toolenv mapping review: plain JavaScript, no dependencies, keyboard first.
"use strict";

const state = {
  queries: [],      // summaries
  qi: -1,           // index of the current query
  query: null,      // its full state
  pi: -1,           // index of the focused proposal
  editing: null,    // proposal being corrected (null: adding a mapping)
};

const $ = (sel) => document.querySelector(sel);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function say(msg, isError) {
  const s = $("#status");
  s.textContent = msg;
  s.classList.toggle("error", !!isError);
}

async function api(path, opts) {
  const resp = await fetch(path, opts);
  let body = null;
  try { body = await resp.json(); } catch (e) { /* empty */ }
  if (!resp.ok) throw new Error((body && body.error) || resp.statusText);
  return body;
}

function annotator() {
  return $("#annotator").value.trim();
}

// ---- loading and rendering

async function loadQueries(keep) {
  state.queries = await api("/api/queries");
  renderQueryList();
  if (state.queries.length === 0) {
    $("#empty").textContent = "Nothing to review: the probe file has no queries.";
    return;
  }
  if (!keep) await openQuery(0);
}

function renderQueryList() {
  const ol = $("#query-list");
  ol.replaceChildren();
  state.queries.forEach((q, i) => {
    const label = `${q.reviewed}/${q.proposals} reviewed` + (q.conflicts ? `, ${q.conflicts} in conflict` : "");
    ol.append(el("li", {},
      el("button", { type: "button", "aria-current": i === state.qi ? "true" : "false", "data-query": q.id, onclick: () => run(() => openQuery(i)) },
        q.text, el("span", { class: "counts", text: label }))));
  });
}

async function openQuery(i, keepProposal) {
  if (i < 0 || i >= state.queries.length) return;
  const q = state.queries[i];
  state.query = await api("/api/query?id=" + encodeURIComponent(q.id));
  state.qi = i;
  if (!keepProposal) state.pi = state.query.proposals.length ? 0 : -1;
  renderQuery();
  renderQueryList();
  focusProposal(state.pi);
}

function fieldList(fields) {
  if (!fields || fields.length === 0) return el("span", { class: "hint", text: "none" });
  const ul = el("ul", { class: "fields" });
  for (const f of fields) {
    if (typeof f === "string") { ul.append(el("li", {}, el("code", { text: f }))); continue; }
    ul.append(el("li", {}, el("code", { text: f.path }), f.type ? ` (${f.type}${f.required ? ", required" : ""})` : ""));
  }
  return ul;
}

function renderQuery() {
  const q = state.query;
  $("#empty").hidden = true;
  $("#query-body").hidden = false;
  $("#query-id").textContent = `query ${q.id} · ${state.qi + 1} of ${state.queries.length}`;
  $("#query-text").textContent = q.text;
  $("#candidate-count").textContent = q.candidates.length;
  const tb = $("#candidates tbody");
  tb.replaceChildren();
  for (const c of q.candidates) {
    tb.append(el("tr", {},
      el("td", {}, el("code", { text: c.id }), c.title ? el("div", { text: c.title }) : null),
      el("td", { text: c.description || "" }),
      el("td", {}, fieldList(c.params)),
      el("td", {}, fieldList(c.outputs.slice(0, 20)))));
  }
  const cr = $("#critique");
  cr.hidden = !q.critique;
  cr.textContent = q.critique ? "Self-reflection: " + q.critique : "";
  const ol = $("#proposals");
  ol.replaceChildren();
  if (q.proposals.length === 0) ol.append(el("li", { class: "empty", text: "No mapping was proposed for this query. Press m to add one." }));
  q.proposals.forEach((p, i) => ol.append(renderProposal(p, i)));
  const added = $("#added");
  added.replaceChildren();
  if (q.added.length) {
    added.append(el("h3", { text: "Mappings added by annotators" }));
    const ul = el("ul");
    for (const a of q.added) ul.append(el("li", {}, `${a.mapping.from} → ${a.mapping.to} `, el("span", { class: "badge", text: a.annotator })));
    added.append(ul);
  }
}

function pairTable(title, pairs) {
  const t = el("table", {}, el("caption", { text: title }), el("thead", {}, el("tr", {}, el("th", { text: "from" }), el("th", { text: "to" }))));
  const tb = el("tbody");
  if (!pairs || pairs.length === 0) tb.append(el("tr", {}, el("td", { colspan: "2", class: "hint", text: "none" })));
  for (const p of pairs || []) tb.append(el("tr", {}, el("td", {}, el("code", { text: p.from })), el("td", {}, el("code", { text: p.to }))));
  t.append(tb);
  return t;
}

function renderProposal(p, i) {
  const m = p.mapping;
  const li = el("li", { class: "proposal", tabindex: "0", "data-id": p.id, "data-status": p.status, "aria-label": `proposal ${i + 1}: ${m.from} to ${m.to}, ${p.status}`,
    onfocus: () => { state.pi = i; } });
  const extra = [];
  if (m.fixed) extra.push(el("div", {}, "with ", el("code", { text: JSON.stringify(m.fixed) })));
  if (m.when) extra.push(el("div", {}, "when ", el("code", { text: JSON.stringify(m.when) })));
  li.append(
    el("h4", {}, el("code", { text: m.from }), " → ", el("code", { text: m.to }),
      el("span", { class: "badge", text: m.provenance }),
      el("span", { class: "badge", text: "score " + (m.score || 0).toFixed(2) }),
      el("span", { class: "badge status status-" + p.status, text: p.status })),
    ...extra,
    el("p", { class: "reasoning", text: m.reasoning || "" }),
    el("div", { class: "pairs" }, pairTable("arguments", m.inputs), pairTable("response fields", m.outputs)),
    el("div", { class: "actions" },
      el("button", { type: "button", class: "accept", onclick: () => run(() => annotate(i, "accept")) }, "Accept (a)"),
      el("button", { type: "button", class: "reject", onclick: () => run(() => annotate(i, "reject")) }, "Reject (r)"),
      el("button", { type: "button", class: "correct", onclick: () => openEditor(i) }, "Correct (c)")));
  if (p.annotations && p.annotations.length) {
    const ul = el("ul", { class: "others" });
    for (const a of p.annotations) ul.append(el("li", {}, `${a.annotator}: ${a.verdict}` + (a.note ? ` — ${a.note}` : "")));
    li.append(ul);
  }
  return li;
}

function focusProposal(i) {
  const items = document.querySelectorAll("#proposals .proposal");
  if (items.length === 0) return;
  i = Math.max(0, Math.min(items.length - 1, i));
  state.pi = i;
  items[i].focus();
  items[i].scrollIntoView({ block: "nearest" });
}

// ---- annotating

async function post(body) {
  if (!annotator()) {
    say("Give your annotator name first (press /).", true);
    $("#annotator").focus();
    return null;
  }
  body.annotator = annotator();
  try {
    const a = await api("/api/annotations", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    return a;
  } catch (e) {
    say("Not saved: " + e.message, true);
    return null;
  }
}

async function annotate(i, verdict) {
  const p = state.query && state.query.proposals[i];
  if (!p) return;
  const a = await post({ query: state.query.id, proposal: p.id, verdict });
  if (!a) return;
  say(`Saved: ${verdict} ${p.mapping.from} → ${p.mapping.to}`);
  await refresh(i + 1);
}

async function refresh(next) {
  state.queries = await api("/api/queries");
  await openQuery(state.qi, true);
  focusProposal(next);
}

function toolOptions(select, chosen) {
  select.replaceChildren();
  for (const c of state.query.candidates) select.append(el("option", { value: c.id, selected: c.id === chosen }, c.id));
}

function pairsText(pairs) {
  return (pairs || []).map((p) => `${p.from} -> ${p.to}`).join("\n");
}

function parsePairs(text) {
  const out = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const m = line.split(/\s*(?:->|→|=)\s*/);
    if (m.length !== 2 || !m[0] || !m[1]) throw new Error(`"${line}" is not "from -> to"`);
    out.push({ from: m[0], to: m[1] });
  }
  return out;
}

function openEditor(i) {
  const p = i === null ? null : state.query.proposals[i];
  state.editing = p;
  const m = p ? p.mapping : { from: state.query.candidates[0] && state.query.candidates[0].id, to: state.query.candidates[1] && state.query.candidates[1].id };
  $("#editor-title").textContent = p ? "Correct the mapping" : "Add a mapping";
  toolOptions($("#edit-from"), m.from);
  toolOptions($("#edit-to"), m.to);
  $("#edit-inputs").value = pairsText(m.inputs);
  $("#edit-outputs").value = pairsText(m.outputs);
  $("#edit-fixed").value = m.fixed ? JSON.stringify(m.fixed) : "";
  $("#edit-note").value = "";
  $("#edit-error").textContent = "";
  $("#editor").showModal();
  $("#edit-inputs").focus();
}

async function saveEditor() {
  let mapping;
  try {
    mapping = { from: $("#edit-from").value, to: $("#edit-to").value, inputs: parsePairs($("#edit-inputs").value), outputs: parsePairs($("#edit-outputs").value) };
    const fixed = $("#edit-fixed").value.trim();
    if (fixed) mapping.fixed = JSON.parse(fixed);
  } catch (e) {
    $("#edit-error").textContent = e.message;
    return;
  }
  const p = state.editing;
  const body = { query: state.query.id, verdict: "correct", mapping, note: $("#edit-note").value.trim() };
  if (p) body.proposal = p.id;
  if (!annotator()) { $("#edit-error").textContent = "Give your annotator name first."; return; }
  body.annotator = annotator();
  try {
    await api("/api/annotations", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  } catch (e) {
    $("#edit-error").textContent = "Not saved: " + e.message;
    return;
  }
  $("#editor").close();
  say(`Saved: correct ${mapping.from} → ${mapping.to}`);
  const i = p ? state.query.proposals.indexOf(p) : state.pi;
  await refresh(p ? i + 1 : i);
}

// ---- keyboard

function typing(e) {
  const t = e.target;
  return t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT");
}

document.addEventListener("keydown", (e) => {
  const editor = $("#editor");
  if (editor.open) {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); run(saveEditor); }
    return; // Escape closes the dialog natively
  }
  if ($("#help").open) return;
  if (e.target === $("#annotator") && (e.key === "Enter" || e.key === "Escape")) {
    e.preventDefault();
    localStorage.setItem("toolenv-annotator", annotator());
    focusProposal(state.pi);
    return;
  }
  if (typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
  const keys = {
    "j": () => focusProposal(state.pi + 1), "ArrowDown": () => focusProposal(state.pi + 1),
    "k": () => focusProposal(state.pi - 1), "ArrowUp": () => focusProposal(state.pi - 1),
    "a": () => annotate(state.pi, "accept"), "r": () => annotate(state.pi, "reject"),
    "c": () => { if (state.query && state.query.proposals[state.pi]) openEditor(state.pi); },
    "m": () => { if (state.query) openEditor(null); },
    "n": () => openQuery(state.qi + 1), "p": () => openQuery(state.qi - 1),
    "e": () => $("#export").click(),
    "?": () => $("#help").showModal(),
    "/": () => $("#annotator").focus(),
  };
  const f = keys[e.key];
  if (f) { e.preventDefault(); run(f); }
});

// Actions run one after another, so that a key pressed while a save is
// still being answered acts on the page the save left, never on a stale one.
let queue = Promise.resolve();
function run(f) {
  queue = queue.then(() => f()).catch((err) => say(String(err), true));
  return queue;
}

$("#editor-form").addEventListener("submit", (e) => { e.preventDefault(); run(saveEditor); });
$("#edit-cancel").addEventListener("click", () => $("#editor").close());
$("#editor").addEventListener("close", () => focusProposal(state.pi));
$("#help").addEventListener("close", () => focusProposal(state.pi));
$("#help-button").addEventListener("click", () => $("#help").showModal());
$("#add-mapping").addEventListener("click", () => openEditor(null));
$("#annotator").addEventListener("change", () => localStorage.setItem("toolenv-annotator", annotator()));

(async function start() {
  try {
    const cfg = await api("/api/config");
    $("#annotator").value = localStorage.getItem("toolenv-annotator") || cfg.annotator || "";
    document.title = `toolenv · mapping review (${cfg.queries} queries)`;
    await loadQueries(false);
    say(`${state.queries.length} queries to review. Press ? for the keys.`);
  } catch (e) {
    say("Cannot load the review: " + e.message, true);
  }
})();
