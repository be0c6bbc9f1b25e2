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
