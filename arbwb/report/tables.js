// arbwb report: long tables become sortable (click a header), filterable (search box) and
// paginated (25 rows a page). Self-contained, no network; without JavaScript every table
// stays whole and readable. Inlined once per page by arbwb/report/html.py.
(function () {
  "use strict";
  var MIN_ROWS = 12; // tables with more body rows than this are enhanced
  var PAGE = 25;
  var INFINITE = /^(minus |[-+])?inf(inity)?$/; // inf or infinity, signed or "minus "
  var MISSING = { "": 1, "n/a": 1, "null": 1, "nan": 1, "none": 1, "…": 1 };
  var NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?%?$/i;

  // A cell's value for sorting: a number (infinities written as words included), null when
  // missing, else the text.
  function value(cell) {
    var text = (cell ? cell.textContent : "").trim().replace(/^"|"$/g, "");
    var lower = text.toLowerCase();
    if (MISSING[lower]) { return null; }
    var infinite = INFINITE.exec(lower);
    if (infinite) { return infinite[1] && infinite[1] !== "+" ? -Infinity : Infinity; }
    var exact = cell.getAttribute("title");
    if (exact !== null && NUMBER.test(exact.trim())) { return parseFloat(exact); }
    var plain = text.replace(/,/g, "");
    return NUMBER.test(plain) ? parseFloat(plain) : text;
  }

  function compare(a, b) {
    if (a === null || b === null) { return a === b ? 0 : (a === null ? 1 : -1); }
    if (typeof a === "number" && typeof b === "number") { return a === b ? 0 : (a < b ? -1 : 1); }
    if (typeof a === "number") { return -1; }
    if (typeof b === "number") { return 1; }
    return a.localeCompare(b, undefined, { numeric: true, sensitivity: "base" });
  }

  function element(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text) { node.textContent = text; }
    return node;
  }

  function enhance(table, index) {
    var head = table.tHead ? table.tHead.rows[0] : table.rows[0];
    if (!head || head.querySelector("td")) { return; } // no header row: a key/value table
    var body = table.tBodies[0];
    var rows = Array.prototype.filter.call(body.rows, function (r) { return r !== head; });
    // Polars' HTML repr marks a frame cut short with a row of "…": hidden, not data.
    var cut = rows.filter(function (r) {
      return Array.prototype.every.call(r.cells, function (c) { return c.textContent.trim() === "…"; });
    });
    rows = rows.filter(function (r) { return cut.indexOf(r) === -1; });
    if (rows.length <= MIN_ROWS) { return; }
    cut.forEach(function (r) { r.style.display = "none"; });
    var noun = cut.length ? " rows shown" : " rows";
    var state = { column: -1, ascending: true, page: 0, shown: rows };
    var search = element("input", { "type": "search", "class": "arbwb-search",
      "placeholder": "filter " + rows.length + noun, "aria-label": "filter rows",
      "id": "arbwb-search-" + index });
    var prev = element("button", { "type": "button", "class": "arbwb-prev" }, "prev");
    var next = element("button", { "type": "button", "class": "arbwb-next" }, "next");
    var info = element("span", { "class": "arbwb-page" });
    var pager = element("div", { "class": "arbwb-pager" });
    pager.append(prev, " ", info, " ", next);
    table.parentNode.insertBefore(search, table);
    table.parentNode.insertBefore(pager, table.nextSibling);

    function draw() {
      var pages = Math.max(1, Math.ceil(state.shown.length / PAGE));
      state.page = Math.min(state.page, pages - 1);
      var first = state.page * PAGE;
      rows.forEach(function (r) { r.style.display = "none"; });
      state.shown.forEach(function (r, i) {
        body.appendChild(r);
        if (i >= first && i < first + PAGE) { r.style.display = ""; }
      });
      info.textContent = "page " + (state.page + 1) + " of " + pages + " (" +
        state.shown.length + " of " + rows.length + noun + ")";
      prev.disabled = state.page === 0;
      next.disabled = state.page >= pages - 1;
    }

    function filter() {
      var needle = search.value.trim().toLowerCase();
      state.shown = rows.filter(function (r) {
        return r.textContent.toLowerCase().indexOf(needle) !== -1;
      });
      if (state.column >= 0) { sort(); }
      state.page = 0;
      draw();
    }

    function sort() {
      var column = state.column, sign = state.ascending ? 1 : -1;
      var keyed = state.shown.map(function (r, i) { return [value(r.cells[column]), i, r]; });
      keyed.sort(function (a, b) {
        var order = compare(a[0], b[0]);
        if (a[0] !== null && b[0] !== null) { order *= sign; }
        return order || a[1] - b[1];
      });
      state.shown = keyed.map(function (k) { return k[2]; });
    }

    Array.prototype.forEach.call(head.cells, function (th, column) {
      th.classList.add("arbwb-sortable");
      th.setAttribute("title", "sort by this column");
      th.addEventListener("click", function () {
        state.ascending = state.column === column ? !state.ascending : true;
        state.column = column;
        Array.prototype.forEach.call(head.cells, function (c) { c.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", state.ascending ? "ascending" : "descending");
        sort();
        state.page = 0;
        draw();
      });
    });
    search.addEventListener("input", filter);
    prev.addEventListener("click", function () { state.page -= 1; draw(); });
    next.addEventListener("click", function () { state.page += 1; draw(); });
    table.classList.add("arbwb-enhanced");
    draw();
  }

  function start() {
    var style = document.createElement("style");
    style.textContent =
      ".arbwb-sortable{cursor:pointer;user-select:none}" +
      ".arbwb-sortable[aria-sort=ascending]::after{content:' \\25B2'}" +
      ".arbwb-sortable[aria-sort=descending]::after{content:' \\25BC'}" +
      ".arbwb-search{display:block;margin:4px 0;padding:2px 4px;font-size:12px;max-width:100%}" +
      ".arbwb-pager{font-size:12px;margin:2px 0 8px}";
    document.head.appendChild(style);
    Array.prototype.forEach.call(document.querySelectorAll("table"), enhance);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
