"""The report page's stylesheet and script, inlined into every report.

The script only adds to a page that is complete without it: tabs, sorting, filters,
search, expanding rows, colouring metric cells, and the contexts (kept compressed in the
page, unpacked on first use). It builds every element from data with ``textContent``; no
text of the results ever reaches ``innerHTML``. It makes no request: the page's Content
Security Policy (``default-src 'none'``) would refuse one anyway.
"""

from __future__ import annotations

STYLE = """
:root{--bg:#fff;--fg:#1d2330;--mute:#5d6675;--line:#dfe3ea;--card:#f5f7fa;--head:#eef1f5;
--pass:#2f9e5b;--fail:#d64545;--none:#a3acb9;--acc:#2f6fdf;--mark:#fff3c4;
--l0:#2f6fdf;--l1:#8e5bd8;--l2:#e08a00;--l3:#1aa3a3;--l4:#c2417c;--l5:#6b8e23;--l6:#8a6d3b;
--l7:#4f5d75;
--h0:rgba(214,69,69,.22);--h1:rgba(214,69,69,.10);--h2:rgba(224,138,0,.08);
--h3:rgba(47,158,91,.09);
--h4:rgba(47,158,91,.18);color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#15181d;--fg:#e3e7ed;--mute:#9aa4b2;--line:#2d333d;
--card:#1c2027;--head:#222731;--mark:#4a3f12}}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,
sans-serif;background:var(--bg);color:var(--fg)}
header.top{padding:14px 24px 10px;border-bottom:1px solid var(--line)}
h1{font-size:20px;margin:0 0 2px}
h2{font-size:18px;margin:22px 0 8px}
h3{font-size:13px;margin:22px 0 8px;color:var(--mute);text-transform:uppercase;
letter-spacing:.05em}
h3.plain{text-transform:none;letter-spacing:0;font-size:15px;color:var(--fg)}
h2 small{font-weight:400;color:var(--mute);font-size:13px;margin-left:6px}
.meta,.note,.mute{color:var(--mute)}
.meta{margin:0;font-size:13px}
.note{font-size:12.5px;margin:6px 0}
main{padding:0 24px 40px}
nav.tabs{display:flex;gap:4px;margin-top:10px;flex-wrap:wrap}
nav.tabs button{font:inherit;border:1px solid var(--line);background:var(--card);color:var(--fg);
border-radius:6px 6px 0 0;padding:5px 12px;cursor:pointer}
nav.tabs button[aria-selected=true]{background:var(--acc);border-color:var(--acc);color:#fff}
.js section.tab[hidden]{display:none}
dl.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:6px 18px;
margin:0}
dl.facts dt{color:var(--mute);font-size:12px}
dl.facts dd{margin:0;font-weight:600;overflow-wrap:anywhere}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(180px,1fr));gap:10px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:9px 12px}
.card h4{margin:0;font-size:13px;font-weight:600;overflow-wrap:anywhere}
.card .big{font-size:24px;font-weight:700;line-height:1.25;overflow-wrap:anywhere}
.card .ci,.card .d{color:var(--mute);font-size:12px}
.card .lb{font-size:11px;color:var(--mute)}
svg{display:block}
svg text{fill:var(--mute);font-size:9px}
svg.sb{width:100%;height:10px;margin:6px 0 3px;border-radius:3px}
svg.mb{width:100%;height:10px;margin:6px 0 3px}
.track{fill:var(--line)}
.band{fill:var(--acc);opacity:.35}
.mk{fill:var(--fg)}
.pass{fill:var(--pass);color:var(--pass)}.fail{fill:var(--fail);color:var(--fail)}
.none{fill:var(--none);color:var(--none)}
.l0{fill:var(--l0);color:var(--l0)}.l1{fill:var(--l1);color:var(--l1)}.l2{fill:var(--l2);
color:var(--l2)}
.l3{fill:var(--l3);color:var(--l3)}.l4{fill:var(--l4);color:var(--l4)}.l5{fill:var(--l5);
color:var(--l5)}
.l6{fill:var(--l6);color:var(--l6)}.l7{fill:var(--l7);color:var(--l7)}
.legend{font-size:11.5px;color:var(--mute);display:flex;flex-wrap:wrap;gap:2px 10px}
.legend span::before{content:"";display:inline-block;width:.75em;height:.75em;border-radius:2px;
background:currentColor;margin-right:4px;vertical-align:-1px}
.legend span{white-space:nowrap}
.legend b{color:var(--fg);font-weight:600}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(210px,1fr));gap:10px}
.chart{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:8px 10px}
.chart h4{margin:0 0 4px;font-size:13px;overflow-wrap:anywhere}
svg.hist{width:100%;height:auto}
svg.hist .hb{fill:var(--acc);opacity:.8}
.js svg.hist .hb{cursor:pointer}
.js svg.hist .hb:hover{opacity:1}
svg.hist .axis,svg.fp .axis{stroke:var(--line);stroke-width:1}
svg.hist .mean{stroke:var(--fg);stroke-dasharray:3 2;stroke-width:1}
svg.cons{width:100%;height:auto}
svg.fp{width:120px;height:14px}
svg.fp .w{stroke-width:2;stroke:currentColor}
.diag{border:1px solid var(--line);border-radius:8px;margin:6px 0;background:var(--card)}
.diag summary{padding:7px 12px;cursor:pointer;list-style-position:inside}
.diag summary b{margin-right:6px}
.diag .body{padding:0 12px 10px}
.diag .count{display:inline-block;min-width:2.2em;text-align:center;border-radius:10px;
padding:0 6px;
margin-right:8px;font-weight:700;background:var(--line)}
.diag.hit .count{background:var(--fail);color:#fff}
.qs{line-height:1.9}
.qs a{display:inline-block;min-width:2.4em;text-align:center;border:1px solid var(--line);
border-radius:4px;
margin:0 3px 3px 0;padding:0 4px;text-decoration:none;color:var(--acc);background:var(--bg)}
button.dq,.bar button{font:inherit;font-size:12.5px;border:1px solid var(--line);
background:var(--bg);
color:var(--fg);border-radius:5px;padding:3px 9px;cursor:pointer}
.bar{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:8px 0;position:sticky;top:0;
z-index:5;
background:var(--bg);padding:6px 0}
.bar input[type=search]{font:inherit;padding:4px 8px;border:1px solid var(--line);
border-radius:5px;
min-width:16em;background:var(--bg);color:var(--fg)}
.bar select{font:inherit;padding:3px 6px;border:1px solid var(--line);border-radius:5px;
max-width:26em;
background:var(--bg);color:var(--fg)}
.bar label{font-size:12.5px;color:var(--mute)}
.chip{background:var(--mark);border-radius:12px;padding:2px 4px 2px 10px;font-size:12.5px}
.chip button{border:0;background:none;padding:0 6px;cursor:pointer;font-size:14px}
.tw{overflow:auto;max-height:88vh;border:1px solid var(--line);border-radius:6px}
table.q{border-collapse:separate;border-spacing:0;table-layout:fixed;font-size:13px}
table.qh{position:sticky;top:0;z-index:4}
.ck{content-visibility:auto}
table.q th{position:sticky;top:0;background:var(--head);z-index:2;text-align:left;
vertical-align:bottom;
padding:6px;border-bottom:1px solid var(--line);font-weight:600;overflow:hidden}
.js table.q th{cursor:pointer;user-select:none}
table.q th[aria-sort=ascending]::after{content:" \\25B2";font-size:9px}
table.q th[aria-sort=descending]::after{content:" \\25BC";font-size:9px}
table.q th.v{height:11.5em;font-size:12px;font-weight:500;padding:6px 2px}
table.q th.v span{writing-mode:vertical-rl;transform:rotate(180deg);display:inline-block;
max-height:11em;
overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
table.q td{padding:5px 6px;border-bottom:1px solid var(--line);vertical-align:top;
overflow-wrap:anywhere}
table.q td:first-child,table.q th:first-child{position:sticky;left:0;z-index:1;
background:var(--bg)}
table.q th:first-child{z-index:3;background:var(--head)}
table.q td:first-child{font-weight:600;color:var(--mute)}
.js table.q tbody tr:not(.cx){cursor:pointer}
.js table.q td p{margin:0;display:-webkit-box;-webkit-line-clamp:3;-webkit-box-orient:vertical;
overflow:hidden}
table.q td p{margin:0;white-space:pre-wrap}
.js table.q tr.x td p,.js .tw.xa td p{display:block}
table.q tr.u td:first-child{box-shadow:inset 3px 0 var(--fail)}
table.q tr.c td:first-child{box-shadow:inset 3px 0 var(--l2)}
table.q tr:target td,table.q tr.flash td{background:var(--mark)}
table.q td.h0{background:var(--h0)}table.q td.h1{background:var(--h1)}
table.q td.h2{background:var(--h2)}
table.q td.h3{background:var(--h3)}table.q td.h4{background:var(--h4)}
tr.cx td{background:var(--card);cursor:auto}
tr.cx h5{margin:4px 0;font-size:12px;color:var(--mute);text-transform:uppercase}
tr.cx ol{margin:0 0 8px;padding-left:2em}
tr.cx li{white-space:pre-wrap;margin:3px 0;max-height:16em;overflow:auto;
border-left:3px solid var(--line);
padding-left:8px}
tr.cx li.hit{border-left-color:var(--pass)}
tr.cx li.miss{border-left-color:var(--fail)}
tr.cx .tag{font-size:11px;font-weight:700;margin-right:6px}
table.cmp{border-collapse:collapse;font-size:13px;margin:6px 0}
table.cmp th,table.cmp td{padding:4px 10px;border-bottom:1px solid var(--line);text-align:right;
font-variant-numeric:tabular-nums}
table.cmp th:first-child,table.cmp td:first-child{text-align:left}
table.cmp td.worse{color:var(--fail);font-weight:700}
table.cmp td.better{color:var(--pass);font-weight:700}
.flip{border:1px solid var(--line);border-radius:8px;margin:8px 0;background:var(--card)}
.flip>header{padding:6px 12px;border-bottom:1px solid var(--line)}
.flip .sides{display:grid;grid-template-columns:1fr 1fr}
.flip .sides>div{padding:6px 12px;min-width:0}
.flip .sides>div+div{border-left:1px solid var(--line)}
.flip h5{margin:2px 0;font-size:12px;color:var(--mute)}
.flip p{margin:2px 0 6px;white-space:pre-wrap;overflow-wrap:anywhere}
.v1{color:var(--pass);font-weight:700}.v0{color:var(--fail);font-weight:700}
ul.drops{margin:4px 0;padding-left:1.2em}
.js .nojs{display:none}
[hidden]{display:none!important}
@media print{.bar,nav.tabs{display:none}.tw{max-height:none;overflow:visible}
table.q td p{display:block!important}}
"""

SCRIPT = r"""
(() => {
"use strict";
const doc = document;
const data = JSON.parse(doc.getElementById("report-data").textContent);
doc.documentElement.classList.add("js");
for (const element of doc.querySelectorAll(".jsonly")) element.hidden = false;
const numeric = new Set(["number", "binary", "continuous", "contexts"]);
const collator = new Intl.Collator(undefined, {numeric: true, sensitivity: "base"});
let contextsPromise = null;

function loadContexts() {
  if (!contextsPromise) {
    const source = doc.getElementById("contexts");
    if (!source || typeof DecompressionStream === "undefined") {
      contextsPromise = Promise.reject(new Error("This browser cannot unpack the contexts."));
    } else {
      const binary = atob(source.textContent.trim());
      const bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      contextsPromise = new Response(stream).text().then(JSON.parse);
    }
  }
  return contextsPromise;
}

function element(tag, className, text) {
  const node = doc.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

class QuestionTable {
  constructor(section) {
    this.section = section;
    this.run = Number(section.dataset.run);
    this.meta = data.runs[this.run];
    this.wrapper = section.querySelector(".tw");
    this.chunks = Array.from(this.wrapper.querySelectorAll(".ck"));
    this.bodies = this.chunks.map((chunk) => chunk.querySelector("tbody"));
    this.size = this.bodies.length ? this.bodies[0].rows.length : 0;
    this.rows = this.bodies.flatMap((body) => Array.from(body.rows));
    this.headers = Array.from(this.wrapper.querySelector("table.qh").tHead.rows[0].cells);
    const parked = element("table", "q");
    parked.hidden = true;
    this.parking = parked.createTBody();
    this.wrapper.appendChild(parked);
    this.roles = this.meta.columns.map((column) => column[1]);
    this.flagsColumn = this.roles.indexOf("flags");
    this.filter = "all";
    this.range = null;
    this.query = "";
    this.texts = null;
    this.sorted = {column: -1, descending: false};
    this.open = new Map();
    this.bar = section.querySelector(".bar");
    this.select = this.bar.querySelector("select");
    this.search = this.bar.querySelector("input[type=search]");
    this.count = this.bar.querySelector(".shown");
    this.chip = this.bar.querySelector(".chip");
    this.expandAll = this.bar.querySelector("input[type=checkbox]");
    this.bar.hidden = false;
    this.select.addEventListener("change", () => {
      this.filter = this.select.value;
      this.apply();
    });
    let timer = 0;
    this.search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        this.query = this.search.value.trim().toLowerCase();
        this.apply();
      }, 120);
    });
    this.chip.querySelector("button").addEventListener("click", () => {
      this.range = null;
      this.apply();
    });
    this.expandAll.addEventListener("change", () => {
      this.wrapper.classList.toggle("xa", this.expandAll.checked);
    });
    this.headers.forEach((header, index) => {
      header.tabIndex = 0;
      header.addEventListener("click", () => this.sort(index));
      header.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          this.sort(index);
        }
      });
    });
    for (const body of this.bodies) body.addEventListener("click", (event) => this.clicked(event));
    section.addEventListener("click", (event) => {
      const bar = event.target.closest("rect.hb");
      if (bar) {
        this.range = {column: Number(bar.dataset.c), low: Number(bar.dataset.lo),
          high: Number(bar.dataset.hi), last: bar.dataset.l === "1"};
        this.apply();
        this.bar.scrollIntoView({block: "start"});
        return;
      }
      const button = event.target.closest("button.dq");
      if (button) {
        this.setFilter(button.dataset.f);
        this.apply();
        this.bar.scrollIntoView({block: "start"});
      }
    });
    this.colourLater();
  }

  text(row, column) {
    const cell = row.cells[column];
    return cell ? cell.textContent.trim() : "";
  }

  clear() {
    this.filter = "all";
    this.select.value = "all";
    this.range = null;
    this.query = "";
    this.search.value = "";
    this.apply();
  }

  setFilter(value) {
    const known = Array.from(this.select.options).some((option) => option.value === value);
    this.filter = known ? value : "all";
    this.select.value = this.filter;
  }

  matches(row, index) {
    const filter = this.filter;
    if (filter === "unscored" && !row.classList.contains("u")) return false;
    if (filter === "consensus" && !row.classList.contains("c")) return false;
    if (filter === "flagged" && !this.text(row, this.flagsColumn)) return false;
    if (filter.startsWith("d:")) {
      if (!this.text(row, this.flagsColumn).split(" ").includes(filter.slice(2))) return false;
    }
    if (filter.startsWith("v:")) {
      const parts = filter.split(":");
      if (this.text(row, Number(parts[1])) !== parts.slice(2).join(":")) return false;
    }
    if (filter.startsWith("w:") || filter.startsWith("b:")) {
      const token = filter[0] + filter.slice(2);
      if (!(row.dataset.f || "").split(" ").includes(token)) return false;
    }
    if (this.range) {
      const raw = this.text(row, this.range.column);
      const value = raw === "" ? NaN : Number(raw);
      if (Number.isNaN(value) || value < this.range.low) return false;
      if (!(value < this.range.high || (this.range.last && value <= this.range.high))) return false;
    }
    if (this.query) {
      if (!this.texts) this.texts = new Map(this.rows.map((r) => [r, r.textContent.toLowerCase()]));
      if (!this.texts.get(row).includes(this.query)) return false;
    }
    return true;
  }

  apply() {
    let shown = 0;
    this.rows.forEach((row, index) => {
      const visible = this.matches(row, index);
      row.hidden = !visible;
      if (visible) shown++;
    });
    this.place();
    this.count.textContent = `Showing ${shown} of ${this.rows.length} questions`;
    if (this.range) {
      const name = this.meta.columns[this.range.column][0];
      const close = this.range.last ? "]" : ")";
      const low = this.range.low.toFixed(2);
      const high = this.range.high.toFixed(2);
      this.chip.firstChild.textContent = `${name} in [${low}, ${high}${close} `;
      this.chip.hidden = false;
    } else {
      this.chip.hidden = true;
    }
    saveHash();
  }

  sort(column) {
    const descending = this.sorted.column === column ? !this.sorted.descending : false;
    this.sorted = {column, descending};
    const isNumber = numeric.has(this.roles[column]);
    const keyed = this.rows.map((row, index) => {
      const raw = this.text(row, column);
      return {row, index, empty: raw === "", key: isNumber ? Number(raw) : raw};
    });
    keyed.sort((a, b) => {
      if (a.empty !== b.empty) return a.empty ? 1 : -1;
      let order = 0;
      if (!a.empty) order = isNumber ? a.key - b.key : collator.compare(a.key, b.key);
      if (descending) order = -order;
      return order || a.index - b.index;
    });
    this.rows = keyed.map((item) => item.row);
    this.place();
    this.headers.forEach((header, index) => {
      if (index !== column) header.removeAttribute("aria-sort");
      else header.setAttribute("aria-sort", descending ? "descending" : "ascending");
    });
  }

  place() {
    // The shown rows fill the chunks in order and the others wait in a hidden table, so a
    // filter never leaves the space of an unseen chunk's rows on the page.
    const shown = this.rows.filter((row) => !row.hidden);
    this.bodies.forEach((body, position) => {
      const part = shown.slice(position * this.size, (position + 1) * this.size);
      const fragment = doc.createDocumentFragment();
      for (const row of part) {
        fragment.appendChild(row);
        const extra = this.open.get(row);
        if (extra) fragment.appendChild(extra);
      }
      body.replaceChildren(fragment);
      this.chunks[position].hidden = part.length === 0;
      this.chunks[position].style.containIntrinsicSize = `auto ${part.length * 58}px`;
    });
    const parked = doc.createDocumentFragment();
    for (const row of this.rows) {
      if (!row.hidden) continue;
      parked.appendChild(row);
      const extra = this.open.get(row);
      if (extra) parked.appendChild(extra);
    }
    this.parking.replaceChildren(parked);
  }

  clicked(event) {
    if (event.target.closest("a,button,input,select,summary,tr.cx")) return;
    const selection = window.getSelection();
    if (selection && !selection.isCollapsed) return;
    const row = event.target.closest("tr");
    if (row) this.toggle(row);
  }

  toggle(row) {
    const expanded = row.classList.toggle("x");
    if (!this.meta.contexts) return;
    const existing = this.open.get(row);
    if (!expanded) {
      if (existing) existing.remove();
      this.open.delete(row);
      return;
    }
    const extra = element("tr", "cx");
    const cell = extra.insertCell();
    cell.colSpan = this.headers.length;
    cell.textContent = "Unpacking the contexts…";
    row.after(extra);
    this.open.set(row, extra);
    const number = this.text(row, 0);
    loadContexts().then((contexts) => this.fill(cell, contexts, number),
      (error) => { cell.textContent = error.message; });
  }

  fill(cell, contexts, number) {
    cell.textContent = "";
    const retrieved = (contexts.retrieved[this.run] || {})[number];
    const golden = (contexts.golden[this.run] || {})[number];
    if (retrieved) {
      const heading = `Retrieved contexts (${retrieved.length}, in rank order)`;
      cell.appendChild(element("h5", "", heading));
      const list = element("ol");
      for (const [index, hit] of retrieved) {
        const item = element("li", hit ? "hit" : "");
        if (hit) item.appendChild(element("span", "tag pass", "golden"));
        item.appendChild(doc.createTextNode(contexts.pool[index]));
        list.appendChild(item);
      }
      cell.appendChild(list);
    } else {
      cell.appendChild(element("p", "note", "No retrieved contexts for this question."));
    }
    if (golden) {
      const missed = golden.filter((pair) => !pair[1]);
      const heading = `Golden contexts not retrieved (${missed.length} of ${golden.length})`;
      cell.appendChild(element("h5", "", heading));
      if (missed.length) {
        const list = element("ul");
        for (const [index] of missed) {
          const item = element("li", "miss");
          item.appendChild(doc.createTextNode(contexts.pool[index]));
          list.appendChild(item);
        }
        cell.appendChild(list);
      }
    }
  }

  colourLater() {
    const columns = [];
    this.roles.forEach((role, index) => {
      if (role === "binary" || role === "continuous") {
        columns.push([index, this.meta.lower.includes(index)]);
      }
    });
    if (!columns.length) return;
    const rows = this.rows.slice();
    let next = 0;
    const idle = window.requestIdleCallback || ((callback) => setTimeout(callback, 16));
    const step = () => {
      const end = Math.min(next + 300, rows.length);
      for (; next < end; next++) {
        const cells = rows[next].cells;
        for (const [column, lower] of columns) {
          const cell = cells[column];
          if (!cell) continue;
          const raw = cell.textContent;
          if (raw === "") continue;
          let value = Number(raw);
          if (Number.isNaN(value) || value < 0 || value > 1) continue;
          if (lower) value = 1 - value;
          cell.classList.add("h" + Math.min(4, Math.floor(value * 5)));
        }
      }
      if (next < rows.length) idle(step);
    };
    idle(step);
  }
}

const tables = new Map();
for (const section of doc.querySelectorAll("section.run")) {
  tables.set(section.id, new QuestionTable(section));
}

const sections = Array.from(doc.querySelectorAll("main > section.tab"));
const nav = doc.getElementById("tabs");
let current = sections.length ? sections[0].id : "";
function showTab(id) {
  if (!sections.some((section) => section.id === id)) id = sections[0].id;
  current = id;
  for (const section of sections) section.hidden = sections.length > 1 && section.id !== id;
  for (const button of nav.querySelectorAll("button")) {
    button.setAttribute("aria-selected", String(button.dataset.target === id));
  }
}
if (sections.length > 1) {
  for (const section of sections) {
    const button = element("button", "", section.dataset.tab);
    button.type = "button";
    button.dataset.target = section.id;
    nav.appendChild(button);
  }
  nav.hidden = false;
  nav.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (button) { showTab(button.dataset.target); saveHash(); }
  });
}

let restoring = false;
function saveHash() {
  if (restoring) return;
  const table = tables.get(current);
  const parts = [];
  if (sections.length > 1) parts.push("tab=" + encodeURIComponent(current));
  if (table) {
    if (table.filter !== "all") parts.push("f=" + encodeURIComponent(table.filter));
    if (table.query) parts.push("q=" + encodeURIComponent(table.query));
    const range = table.range;
    if (range) parts.push(`r=${range.column}:${range.low}:${range.high}:${range.last ? 1 : 0}`);
  }
  const plain = location.pathname + location.search;
  history.replaceState(null, "", parts.length ? "#" + parts.join("&") : plain);
}

function restoreHash() {
  const raw = location.hash.slice(1);
  if (!raw || raw.startsWith("r") && /^r\d+q\d+$/.test(raw)) {
    showTab(current);
    if (raw) reveal(raw, false);
    return;
  }
  const params = new URLSearchParams(raw);
  restoring = true;
  showTab(params.get("tab") || current);
  const table = tables.get(current);
  if (table) {
    table.setFilter(params.get("f") || "all");
    const query = (params.get("q") || "").toLowerCase();
    table.query = query;
    table.search.value = query;
    const range = (params.get("r") || "").split(":").map(Number);
    const column = range[0];
    const metric = ["continuous", "binary"].includes(table.roles[column]);
    if (range.length === 4 && range.every(Number.isFinite) && metric) {
      table.range = {column, low: range[1], high: range[2], last: range[3] === 1};
    }
    table.apply();
  }
  restoring = false;
}

function reveal(id, smooth) {
  const row = doc.getElementById(id);
  if (!row) return;
  const section = row.closest("section.tab");
  if (section && section.hidden) showTab(section.id);
  const table = tables.get(section ? section.id : "");
  if (table && row.hidden) table.clear();
  row.scrollIntoView({block: "center", behavior: smooth ? "smooth" : "auto"});
  row.classList.add("flash");
  setTimeout(() => row.classList.remove("flash"), 1600);
}

doc.addEventListener("click", (event) => {
  const link = event.target.closest("a[href^='#r']");
  if (!link) return;
  event.preventDefault();
  reveal(link.getAttribute("href").slice(1), true);
});
doc.addEventListener("keydown", (event) => {
  if (event.key !== "/" || event.target.closest("input,select,textarea")) return;
  const table = tables.get(current);
  if (table) { event.preventDefault(); table.search.focus(); }
});
window.addEventListener("hashchange", restoreHash);
restoreHash();
performance.mark("report-ready");
})();
"""
