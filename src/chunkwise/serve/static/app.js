// chunkwise search page. Everything from the store is hostile text: it is only ever placed with
// textContent / text nodes (never innerHTML), and control, bidirectional and zero-width characters
// are shown as visible marks. The page talks to this origin only (the CSP allows nothing else).
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const state = { auth: null };
  const TOKEN_KEY = "chunkwise.token";
  const MODES = ["auto", "bm25", "dense", "hybrid"];
  const PER = ["passage", "document"];
  const HIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

  function visible(s) {
    return String(s ?? "").replace(HIDDEN, (c) => {
      const n = c.codePointAt(0);
      if (n < 0x20) return String.fromCodePoint(0x2400 + n); // ESC -> ␛
      if (n === 0x7f) return "\u2421";
      return "\u27e8U+" + n.toString(16).toUpperCase().padStart(4, "0") + "\u27e9";
    });
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = visible(text);
    return e;
  }

  // `text` with the spans the server found ([start, end) offsets: the search analyzer's matches of
  // the query, stopwords never) in <mark>; each piece is made visible on its own, so offsets hold.
  function marked(text, spans) {
    const frag = document.createDocumentFragment();
    const raw = String(text ?? "");
    let last = 0;
    for (const [s, e] of spans || []) {
      if (s < last || e <= s || e > raw.length) continue;
      if (s > last) frag.append(visible(raw.slice(last, s)));
      const mk = document.createElement("mark");
      mk.textContent = visible(raw.slice(s, e));
      frag.append(mk);
      last = e;
    }
    frag.append(visible(raw.slice(last)));
    return frag;
  }

  // The words the server marked in a result, for chunks of its document shown around it (as they
  // are: the page does not analyse text itself).
  function markedWords(r) {
    const out = new Set();
    const pieces = { hit: r.hit.text, before: r.context.before, after: r.context.after };
    for (const [name, text] of Object.entries(pieces)) {
      for (const [s, e] of r.marks[name] || []) out.add(text.slice(s, e).toLowerCase());
    }
    return out;
  }

  function wordSpans(text, words) {
    const spans = [];
    if (!words.size) return spans;
    for (const m of String(text).matchAll(/[\p{L}\p{N}\p{M}]+/gu)) {
      if (words.has(m[0].toLowerCase())) spans.push([m.index, m.index + m[0].length]);
    }
    return spans;
  }

  function chosenGroups() {
    return $("groups").value.split(",").map((s) => s.trim()).filter(Boolean);
  }

  // How this browser names the caller (see README "Serve"): a bearer token in tokens mode;
  // otherwise X-Chunkwise-Groups, each tag percent-encoded (a header carries Latin-1 only).
  // Behind a gateway (--trust-groups-header) the gateway replaces that header with the user's own.
  function credentials(groups) {
    const h = { Accept: "application/json" };
    if (state.auth === "tokens") {
      const t = $("token").value.trim();
      if (t) h.Authorization = "Bearer " + t;
    } else if (groups.length) {
      h["X-Chunkwise-Groups"] = groups.map(encodeURIComponent).join(",");
    }
    return h;
  }

  async function call(path, options) {
    const r = await fetch(path, { cache: "no-store", credentials: "same-origin", ...options });
    let body = null;
    try {
      body = await r.json();
    } catch (_) {
      body = null;
    }
    if (!r.ok) {
      throw new Error(body && body.error ? body.error.message : r.status + " " + r.statusText);
    }
    return body;
  }

  function status(text) {
    $("status").textContent = visible(text);
  }

  function shareUrl(q, groups, mode, k, per) {
    const p = new URLSearchParams({ q });
    if (state.auth !== "tokens" && groups.length) p.set("groups", groups.join(","));
    p.set("mode", mode);
    if (k !== 5) p.set("k", String(k));
    if (per !== "passage") p.set("per", per);
    window.chunkwiseFilters.toParams(p);
    return "/?" + p.toString();
  }

  async function search(push) {
    const q = $("q").value.trim();
    if (!q) return;
    const groups = chosenGroups();
    const mode = MODES.includes($("mode").value) ? $("mode").value : "auto";
    const k = Math.min(100, Math.max(1, parseInt($("k").value, 10) || 5));
    const per = PER.includes($("per").value) ? $("per").value : "passage";
    const url = shareUrl(q, groups, mode, k, per);
    history[push ? "pushState" : "replaceState"](null, "", url);
    $("share-link").href = url;
    $("share-link").textContent = location.origin + url;
    $("share").hidden = false;
    status("Searching…");
    $("results").replaceChildren();
    const body = { query: q, mode, k, per };
    if (state.auth === "body") body.groups = groups;
    const filters = window.chunkwiseFilters.body();
    if (filters) body.filters = filters;
    const headers = { ...credentials(state.auth === "body" ? [] : groups), "Content-Type": "application/json" };
    let res, who;
    try {
      [res, who] = await Promise.all([
        call("/search", { method: "POST", headers, body: JSON.stringify(body) }),
        call("/whoami", { headers: credentials(groups) }),
      ]);
    } catch (e) {
      status("Search failed: " + e.message);
      return;
    }
    await render(res, who, groups);
  }

  // [page, x0, top, x1, bottom] boxes (points from the page's top left) as "p. 3 (72, 90)–(540, 130)"
  function regions(boxes) {
    return boxes.map((b) => "p. " + b[0] + " (" + b[1] + ", " + b[2] + ")–(" + b[3] + ", " + b[4] + ")").join("; ");
  }

  function citation(r) {
    const cite = el("div", "cite");
    cite.append(el("span", "rank", "#" + r.rank), el("span", "source", r.source_uri || r.doc_id));
    const hit = r.hit;
    if (hit.heading_path.length) cite.append(el("span", "path", hit.heading_path.join(" › ")));
    if (hit.page !== null && hit.page !== undefined) {
      const page = el("span", "page", "p. " + hit.page);
      if (hit.boxes && hit.boxes.length) {
        page.title = regions(hit.boxes);  // where on the page: a tooltip, and a line a reader can copy
        cite.append(page, el("span", "region", "region " + regions(hit.boxes)));
      } else cite.append(page);
    }
    if (hit.start_char !== null) cite.append(el("span", "offsets", "chars " + hit.start_char + "–" + hit.end_char));
    if (r.version) cite.append(el("span", "version", "version " + r.version + (r.updated_at ? " (" + r.updated_at + ")" : "")));
    else if (r.updated_at) cite.append(el("span", "version", "updated " + r.updated_at));
    if (r.acl && r.acl.length) cite.append(el("span", "tags", "tags " + r.acl.join(", ")));
    cite.append(el("span", "score", "score " + Number(r.score).toPrecision(4)));
    return cite;
  }

  // What the result points at first (its hit chunk, words marked), then the rest of the passage as
  // context around it: merged hits and what an expansion added.
  function passage(r) {
    const box = el("blockquote", "passage");
    const hit = el("div", "hit-text");
    hit.append(marked(r.hit.text, r.marks.hit));
    box.append(hit);
    const { before, after } = r.context;
    if (!before.trim() && !after.trim()) return [box];
    const around = el("div", "around");
    const how = r.expanded_from.length ? "expanded from " + r.expanded_from.length + " hit(s)" : "merged hits";
    around.append(el("div", "around-label", "Context around the hit (" + how + ")" +
                     (r.start_char !== null ? " · passage chars " + r.start_char + "–" + r.end_char : "")));
    for (const side of ["before", "after"]) {
      const raw = r.context[side];
      if (!raw.trim()) continue;
      // the blank lines between the context and the hit are not shown; the marks move with the text
      const lead = raw.length - raw.trimStart().length;
      const text = raw.trim();
      const spans = (r.marks[side] || []).map(([a, b]) => [a - lead, b - lead]).filter(([a, b]) => a >= 0 && b <= text.length);
      const p = el("div", "ctx " + side);
      p.append(marked(text, spans));
      around.append(p);
    }
    return [box, around];
  }

  async function render(res, who, groups) {
    const list = $("results");
    const as = who.groups.join(", ");
    if (!res.results.length) {
      status("No passage that " + as + " may see matches “" + res.query + "”.");
      return;
    }
    const docs = res.per === "document" ? new Set(res.results.map((r) => r.doc_id)).size + " document(s), " : "";
    status(docs + res.results.length + " passage(s) for “" + res.query + "” (" + res.mode + "), searched as " + as +
           "; " + res.context_tokens + " context tokens");
    const byDoc = new Map();
    let shown = 0;
    for (const r of res.results) {
      if (res.per === "document" && r.document_rank !== shown) {
        shown = r.document_rank;
        list.append(el("li", "doc-group", "Document " + shown + ": " + (r.source_uri || r.doc_id)));
      }
      const li = el("li", "result");
      const ctx = el("div", "context");
      ctx.append(el("p", "muted", "Loading the document…"));
      li.append(citation(r), ...passage(r), ctx);
      list.append(li);
      if (!byDoc.has(r.doc_id)) byDoc.set(r.doc_id, []);
      byDoc.get(r.doc_id).push([r, ctx]);
    }
    for (const [docId, items] of byDoc) {
      let doc;
      try {
        doc = await call("/documents/" + encodeURIComponent(docId), { headers: credentials(groups) });
      } catch (e) {
        for (const [, ctx] of items) ctx.replaceChildren(el("p", "muted", "Document not available: " + e.message));
        continue;
      }
      for (const [r, ctx] of items) inDocument(ctx, doc, r);
    }
    status($("status").textContent + " — each shown inside its document");
  }

  // The passage inside its document: every chunk the caller may see, boundaries marked, the hit
  // chunk highlighted and the passage's other chunks tinted (query words marked), scrolled into view.
  function inDocument(ctx, doc, r) {
    const words = markedWords(r);
    const title = el("div", "doc-title", (doc.title ? doc.title + " — " : "") + doc.source_uri + " · " +
                     doc.records.length + " chunk(s) you may see");
    const box = el("div", "doc");
    let first = null;
    for (const rec of doc.records) {
      // positions are null when the caller may not read all of the document: the passage's ids say what is in it
      const inside = rec.start_char === null ? r.chunk_ids.includes(rec.chunk_id)
        : rec.start_char < r.end_char && rec.end_char > r.start_char;
      const hit = rec.chunk_id === r.hit.chunk_id;
      const c = el("div", hit ? "chunk hit" : inside ? "chunk near" : "chunk");
      let label = rec.start_char === null ? "chunk"
        : "chunk " + rec.chunk_index + " · chars " + rec.start_char + "–" + rec.end_char;
      if (rec.heading_path && rec.heading_path.length) label += " · " + rec.heading_path.join(" › ");
      if (rec.page !== null && rec.page !== undefined) label += " · p. " + rec.page;
      if (rec.boxes && rec.boxes.length) label += " · " + regions(rec.boxes);
      c.append(el("div", "boundary", label));
      const text = el("div", "chunk-text");
      const spans = hit && rec.text === r.hit.text ? r.marks.hit : wordSpans(rec.text, words);
      text.append(inside ? marked(rec.text, spans) : visible(rec.text));
      c.append(text);
      box.append(c);
      if (hit && !first) first = c;
    }
    ctx.replaceChildren(title, box);
    if (first) box.scrollTop = Math.max(0, first.offsetTop - 4);
  }

  function fromUrl() {
    const p = new URLSearchParams(location.search);
    $("q").value = p.get("q") || "";
    if (state.auth !== "tokens") $("groups").value = p.get("groups") || ""; // back: that search's groups, not the last typed
    window.chunkwiseFilters.fromParams(p);
    $("mode").value = MODES.includes(p.get("mode")) ? p.get("mode") : "auto";
    $("k").value = String(Math.min(100, Math.max(1, parseInt(p.get("k"), 10) || 5)));
    $("per").value = PER.includes(p.get("per")) ? p.get("per") : "passage";
  }

  async function start() {
    try {
      const h = await call("/health");
      state.auth = h.auth;
      const how = { header: "your gateway (X-Chunkwise-Groups)", tokens: "your bearer token",
                    body: "this form (local, insecure mode)" }[h.auth];
      $("served").textContent = visible("model " + (h.model || "none") + " · groups from " + how);
    } catch (e) {
      status("The service does not answer: " + e.message);
      return;
    }
    if (state.auth === "tokens") {
      $("token-label").hidden = false;
      $("groups-label").hidden = true;
      $("token").value = sessionStorage.getItem(TOKEN_KEY) || "";
      $("groups-note").textContent = "Your token decides your groups; it is kept for this tab only and never put in the link.";
    } else if (state.auth === "header") {
      $("groups-note").textContent = "Groups are sent as X-Chunkwise-Groups; behind a gateway, the gateway sets them for you.";
    }
    fromUrl();
    $("search").addEventListener("submit", (ev) => {
      ev.preventDefault();
      if (state.auth === "tokens") sessionStorage.setItem(TOKEN_KEY, $("token").value.trim());
      search(true);
    });
    window.addEventListener("popstate", () => {
      fromUrl();
      search(false);
    });
    if (!$("q").value) return;
    if (state.auth === "tokens" && !$("token").value.trim()) {
      status("Enter your token to run this search.");
      return;
    }
    search(false);
  }

  start();
})();
