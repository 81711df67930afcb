// chunkwise search page. Everything from the store is hostile text: it is only ever placed with
// textContent / text nodes (never innerHTML), and control, bidirectional and zero-width characters
// are shown as visible marks. The page talks to this origin only (the CSP allows nothing else).
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const state = { auth: null };
  const TOKEN_KEY = "chunkwise.token";
  const MODES = ["auto", "bm25", "dense", "hybrid"];
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

  function terms(query) {
    const out = new Set();
    for (const t of query.toLowerCase().split(/[^\p{L}\p{N}]+/u)) if (t.length > 1) out.add(t);
    return [...out].sort((a, b) => b.length - a.length);
  }

  const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

  // The text with the query's words in <mark>; every piece is a text node.
  function marked(text, words) {
    const frag = document.createDocumentFragment();
    const shown = visible(text);
    if (!words.length) {
      frag.append(shown);
      return frag;
    }
    const re = new RegExp("(?<![\\p{L}\\p{N}])(?:" + words.map(escapeRe).join("|") + ")(?![\\p{L}\\p{N}])", "giu");
    let last = 0;
    for (const m of shown.matchAll(re)) {
      if (m.index > last) frag.append(shown.slice(last, m.index));
      const mk = document.createElement("mark");
      mk.textContent = m[0];
      frag.append(mk);
      last = m.index + m[0].length;
    }
    frag.append(shown.slice(last));
    return frag;
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

  function shareUrl(q, groups, mode, k) {
    const p = new URLSearchParams({ q });
    if (state.auth !== "tokens" && groups.length) p.set("groups", groups.join(","));
    p.set("mode", mode);
    if (k !== 5) p.set("k", String(k));
    window.chunkwiseFilters.toParams(p);
    return "/?" + p.toString();
  }

  async function search(push) {
    const q = $("q").value.trim();
    if (!q) return;
    const groups = chosenGroups();
    const mode = MODES.includes($("mode").value) ? $("mode").value : "auto";
    const k = Math.min(100, Math.max(1, parseInt($("k").value, 10) || 5));
    const url = shareUrl(q, groups, mode, k);
    history[push ? "pushState" : "replaceState"](null, "", url);
    $("share-link").href = url;
    $("share-link").textContent = location.origin + url;
    $("share").hidden = false;
    status("Searching…");
    $("results").replaceChildren();
    const body = { query: q, mode, k };
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

  function citation(r) {
    const cite = el("div", "cite");
    cite.append(el("span", "rank", "#" + r.rank), el("span", "source", r.source_uri || r.doc_id));
    if (r.heading_path.length) cite.append(el("span", "path", r.heading_path.join(" › ")));
    if (r.page !== null && r.page !== undefined) cite.append(el("span", "page", "p. " + r.page));
    cite.append(el("span", "offsets", "chars " + r.start_char + "–" + r.end_char));
    cite.append(el("span", "score", "score " + Number(r.score).toPrecision(4)));
    if (r.expanded_from.length) cite.append(el("span", "expanded", "expanded from " + r.expanded_from.length + " hit(s)"));
    return cite;
  }

  async function render(res, who, groups) {
    const words = terms(res.query);
    const list = $("results");
    const as = who.groups.join(", ");
    if (!res.results.length) {
      status("No passage that " + as + " may see matches “" + res.query + "”.");
      return;
    }
    status(res.results.length + " passage(s) for “" + res.query + "” (" + res.mode + "), searched as " + as +
           "; " + res.context_tokens + " context tokens");
    const byDoc = new Map();
    for (const r of res.results) {
      const li = el("li", "result");
      const passage = el("blockquote", "passage");
      passage.append(marked(r.text, words));
      const ctx = el("div", "context");
      ctx.append(el("p", "muted", "Loading the document…"));
      li.append(citation(r), passage, ctx);
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
      for (const [r, ctx] of items) inDocument(ctx, doc, r, words);
    }
    status($("status").textContent + " — each shown inside its document");
  }

  // The passage inside its document: every chunk the caller may see, boundaries marked, the chunks
  // the passage covers highlighted (query words marked), scrolled into view.
  function inDocument(ctx, doc, r, words) {
    const title = el("div", "doc-title", (doc.title ? doc.title + " — " : "") + doc.source_uri + " · " +
                     doc.records.length + " chunk(s) you may see");
    const box = el("div", "doc");
    let first = null;
    for (const rec of doc.records) {
      const hit = rec.start_char < r.end_char && rec.end_char > r.start_char;
      const c = el("div", hit ? "chunk hit" : "chunk");
      let label = "chunk " + rec.chunk_index + " · chars " + rec.start_char + "–" + rec.end_char;
      if (rec.heading_path && rec.heading_path.length) label += " · " + rec.heading_path.join(" › ");
      if (rec.page !== null && rec.page !== undefined) label += " · p. " + rec.page;
      c.append(el("div", "boundary", label));
      const text = el("div", "chunk-text");
      text.append(hit ? marked(rec.text, words) : visible(rec.text));
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
