// Search filters: documents, a folder (source prefix), file types, a date range. They only narrow
// what the caller's groups already permit (the server applies them after the access filter). They
// live in the URL with the query, so a shared link, back and forward all give the same search.
// app.js calls the three functions below; everything else about the page is there.
"use strict";
window.chunkwiseFilters = (() => {
  const $ = (id) => document.getElementById(id);
  const DATE = /^\d{4}-\d{2}-\d{2}$/;
  const MAX = 100; // values per list, the server's limit
  // URL parameter -> form field
  const PARAMS = { doc: "f-doc", folder: "f-folder", type: "f-type", after: "f-after", before: "f-before" };

  const list = (s) => [...new Set(String(s || "").split(",").map((x) => x.trim()).filter(Boolean))].slice(0, MAX);
  const date = (s) => (DATE.test(String(s || "")) ? s : null);

  function read() {
    return {
      doc_ids: list($("f-doc").value),
      source_prefix: $("f-folder").value.trim(),
      file_types: list($("f-type").value.toLowerCase()).map((t) => t.replace(/^\.+/, "")).filter(Boolean),
      updated_after: date($("f-after").value),
      updated_before: date($("f-before").value),
    };
  }

  const any = (f) => Boolean(f.doc_ids.length || f.source_prefix || f.file_types.length || f.updated_after ||
                             f.updated_before);

  function summary(f) {
    const parts = [];
    if (f.doc_ids.length) parts.push("documents " + f.doc_ids.join(", "));
    if (f.source_prefix) parts.push("under " + f.source_prefix);
    if (f.file_types.length) parts.push("types " + f.file_types.join(", "));
    if (f.updated_after) parts.push("from " + f.updated_after);
    if (f.updated_before) parts.push("until " + f.updated_before);
    if (f.updated_after && f.updated_before && f.updated_after > f.updated_before) parts.push("an empty date range");
    return parts.join("; ");
  }

  function show(f) {
    $("filters").open = $("filters").open || any(f);
    $("filters-summary").textContent = any(f) ? "Filters: " + summary(f) : "Filters";
  }

  return {
    // The request's "filters" object, or null when none is set.
    body() {
      const f = read();
      show(f);
      return any(f) ? f : null;
    },
    // The filters as URL parameters (only those set), added to ``params``.
    toParams(params) {
      const f = read();
      if (f.doc_ids.length) params.set("doc", f.doc_ids.join(","));
      if (f.source_prefix) params.set("folder", f.source_prefix);
      if (f.file_types.length) params.set("type", f.file_types.join(","));
      if (f.updated_after) params.set("after", f.updated_after);
      if (f.updated_before) params.set("before", f.updated_before);
    },
    // The form from the URL: a parameter that is absent clears its field, so going back to a
    // search without filters shows it without them.
    fromParams(params) {
      for (const [name, id] of Object.entries(PARAMS)) $(id).value = params.get(name) || "";
      for (const id of ["f-after", "f-before"]) if (!date($(id).value)) $(id).value = "";
      $("filters").open = false;
      show(read());
    },
  };
})();
