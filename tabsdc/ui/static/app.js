// The page of the tabsdc web app: six steps over the JSON API of tabsdc/ui/_app.py.
// Each browser tab has its own session; its id is kept in the tab's sessionStorage, so a
// reload or Back comes back to the same session and the page draws its state again.
"use strict";

const $ = (id) => document.getElementById(id);
const KEY = "tabsdc-session";
let session = null;
let maxUploadMb = 0;
let columns = [];
let dimOrder = [];
let pollTimer = null;
let rulesTimer = null;
const numberText = new Intl.NumberFormat("en-US", {maximumFractionDigits: 6});

// -- plumbing ---------------------------------------------------------------------------
class SessionEnded extends Error {}

async function api(path, body, method) {
  const options = {method: method || (body === undefined ? "GET" : "POST")};
  if (body !== undefined) {
    options.headers = {"Content-Type": "application/json"};
    options.body = JSON.stringify(body);
  }
  return answer(await fetch(`/api/${session}/${path}`, options));
}

async function answer(response) {
  let data = {};
  try { data = await response.json(); } catch (error) { data = {error: response.statusText}; }
  if (response.status === 404) throw new SessionEnded(data.error || "this session has ended: reload the page");
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function say(id, text, kind) {
  const element = $(id);
  element.textContent = text || "";
  element.className = "msg" + (kind ? " " + kind : "");
}

async function guarded(messageId, work) {
  say(messageId, "working ...", "busy");
  try {
    await work();
    if ($(messageId).className.includes("busy")) say(messageId, "");
  } catch (error) {
    say(messageId, error.message, "error");
    return false;
  }
  return true;
}

function show(step) {
  document.querySelectorAll(".step").forEach((s) => s.classList.toggle("active", s.id === "step-" + step));
  document.querySelectorAll("#steps button").forEach((b) => b.classList.toggle("active", b.dataset.step === step));
  sessionStorage.setItem(KEY + "-step", step);
  if (step === "check") loadCheck();
  if (step === "download") prepareDownloads();
}

function table(header, rows) {
  const t = document.createElement("table");
  const head = t.createTHead().insertRow();
  header.forEach((h) => { const th = document.createElement("th"); th.textContent = h; head.appendChild(th); });
  const body = t.createTBody();
  rows.forEach((row) => {
    const tr = body.insertRow();
    row.forEach((cell) => { tr.insertCell().textContent = cell; });
  });
  return t;
}

function fill(id, data) {
  const element = $(id);
  element.replaceChildren();
  if (data && data.rows.length) element.appendChild(table(data.header, data.rows));
}

function listItems(id, lines) {
  const list = $(id);
  list.replaceChildren();
  (lines || []).forEach((line) => { const li = document.createElement("li"); li.textContent = line; list.appendChild(li); });
}

function selectOptions(id, values, blank) {
  const select = $(id);
  select.replaceChildren();
  if (blank) select.add(new Option(blank, ""));
  values.forEach((v) => select.add(new Option(v, v)));
}

function setValue(id, value) {
  if (value !== undefined && value !== null) $(id).value = value;
}

function codeText(code) {
  return code.trim() === "" ? "(blank)" : code;
}

// -- step 1: data -----------------------------------------------------------------------
async function upload(file, query) {
  if (file.size > maxUploadMb * 1e6) {
    throw new Error(`${file.name} is larger than the upload limit of ${maxUploadMb} MB; start the app with a larger --max-upload-mb, or upload a smaller file`);
  }
  return answer(await fetch(`/api/${session}/upload?${query}`, {method: "POST", body: file}));
}

function showData(data) {
  $("data-form").hidden = data.kind !== "data";
  $("jj-form").hidden = data.kind !== "jj";
  $("data-read-as").textContent = data.read_as ? `Read as: ${data.read_as}.` : "";
  if (data.kind === "jj") {
    $("jj-summary").textContent = `${data.name}: ${data.table.text}`;
    setTable(data.table);
    say("data-msg", `${data.name}: a table of ${data.table.cells} cells`, "ok");
    return;
  }
  columns = data.columns;
  fill("data-columns", {header: ["column", "type", "distinct", "missing", "spaces only", "examples", "why not numeric"],
    rows: data.columns.map((c) => [c.name, c.type, c.distinct, c.missing, c.spaces, c.examples, c.note])});
  fill("data-preview", {header: data.header, rows: data.head});
  const numeric = columns.filter((c) => c.type === "number").map((c) => c.name);
  const names = columns.map((c) => c.name);
  selectOptions("data-value", numeric, "(none: count contributors)");
  selectOptions("data-holding", names, "(none)");
  selectOptions("data-weight", numeric, "(none)");
  selectOptions("data-freq", numeric, "(none)");
  const notes = columns.filter((c) => c.note).map((c) => `${c.name} (${c.note})`);
  $("data-not-numeric").textContent = notes.length
    ? "Not offered as a response or weight, because they are not numbers: " + notes.join("; ") + "." : "";
  const dims = $("data-dims");
  dims.replaceChildren();
  dimOrder = [];
  names.forEach((name) => {
    const label = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox"; box.value = name; box.name = "dim"; box.id = "dim-" + name;
    box.addEventListener("change", () => {
      dimOrder = box.checked ? [...dimOrder, name] : dimOrder.filter((d) => d !== name);
      showDimOrder();
    });
    label.append(box, " " + name);
    dims.appendChild(label);
  });
  showDimOrder();
  say("data-msg", `${data.name}: ${data.rows} rows, ${columns.length} columns`, "ok");
}

function showDimOrder() {
  const list = $("dim-order");
  list.replaceChildren();
  dimOrder.forEach((dim, i) => {
    const li = document.createElement("li");
    const up = document.createElement("button");
    up.type = "button"; up.textContent = "up"; up.id = "dim-up-" + dim; up.disabled = i === 0;
    up.addEventListener("click", () => {
      dimOrder.splice(i - 1, 0, dimOrder.splice(i, 1)[0]);
      showDimOrder();
    });
    li.append(dim + " ", up);
    list.appendChild(li);
  });
  list.hidden = !dimOrder.length;
  listItems("data-warnings", columns.filter((c) => dimOrder.includes(c.name) && c.code_warning)
    .map((c) => c.code_warning));
}

function chosenDims() {
  return [...dimOrder];
}

function dataChoices() {
  return {kind: $("data-kind").value, dims: chosenDims(), value: $("data-value").value,
    holding: $("data-holding").value, weight: $("data-weight").value, freq: $("data-freq").value,
    negative: $("data-negative").value};
}

function showKind() {
  const cells = $("data-kind").value === "cells";
  document.querySelectorAll(".micro").forEach((e) => { e.hidden = cells; });
  document.querySelectorAll(".cells").forEach((e) => { e.hidden = !cells; });
}

function hierarchyRows() {
  const box = $("hier-dims");
  box.replaceChildren();
  chosenDims().forEach((dim) => {
    const row = document.createElement("div");
    row.className = "hier-row";
    const name = document.createElement("b");
    name.textContent = dim;
    const kind = document.createElement("select");
    kind.id = "h-kind-" + dim;
    [["flat", "flat"], ["levels", "level columns"], ["prefixes", "prefix lengths"],
      ["file", "parent/child file"]].forEach(([value, label]) => kind.add(new Option(label, value)));
    const text = (id, placeholder) => {
      const input = document.createElement("input");
      input.type = "text"; input.id = id; input.placeholder = placeholder; input.hidden = true;
      return input;
    };
    const fileInput = document.createElement("input");
    fileInput.type = "file"; fileInput.id = "h-file-" + dim; fileInput.accept = ".csv,.txt";
    fileInput.hidden = true;
    const message = document.createElement("span");
    message.className = "msg"; message.id = "h-msg-" + dim;
    // built element by element: a column name is text, never markup
    row.append(name, kind, text("h-levels-" + dim, "coarser columns, e.g. A10, A21"),
      text("h-lengths-" + dim, "lengths, e.g. 3, 4, 5"), fileInput, message);
    box.appendChild(row);
    kind.addEventListener("change", () => showHierarchyKind(dim));
    fileInput.addEventListener("change", async (event) => {
      const file = event.target.files[0];
      try {
        const result = await upload(file, `name=${encodeURIComponent(file.name)}&dim=${encodeURIComponent(dim)}`);
        say("h-msg-" + dim, `${result.codes} codes under ${result.root}`, "ok");
      } catch (error) { say("h-msg-" + dim, error.message, "error"); }
    });
  });
}

function showHierarchyKind(dim) {
  const kind = $("h-kind-" + dim).value;
  $("h-levels-" + dim).hidden = kind !== "levels";
  $("h-lengths-" + dim).hidden = kind !== "prefixes";
  $("h-file-" + dim).hidden = kind !== "file";
}

function splitList(text) {
  return text.split(/[\s,;]+/).filter((x) => x);
}

function hierarchyChoices() {
  const choices = {};
  chosenDims().forEach((dim) => {
    const kind = $("h-kind-" + dim).value;
    choices[dim] = {kind, columns: splitList($("h-levels-" + dim).value),
      lengths: splitList($("h-lengths-" + dim).value)};
  });
  return choices;
}

// -- step 2: table and trees ------------------------------------------------------------
function treeNode(node) {
  const parts = [];
  if (node.count !== null) parts.push(`${numberText.format(node.count)} contributors`);
  if (node.value !== null) parts.push(`value ${numberText.format(node.value)}`);
  const label = codeText(node.code) + (parts.length ? ` (${parts.join(", ")})` : "");
  if (!node.children.length) {
    const leaf = document.createElement("div");
    leaf.className = "leaf"; leaf.textContent = label;
    return leaf;
  }
  const details = document.createElement("details");
  const summary = document.createElement("summary");
  summary.textContent = label + ` - ${node.children.length} below`;
  details.appendChild(summary);
  node.children.forEach((child) => details.appendChild(treeNode(child)));
  return details;
}

function showTable(result) {
  $("table-summary").textContent = `Table: ${result.table.cells} cells, ${result.table.relations} relations (${result.table.dims.join(" x ")})`;
  listItems("table-warnings", result.warnings);
  const trees = $("trees");
  trees.replaceChildren();
  Object.entries(result.trees).forEach(([dim, root]) => {
    const h = document.createElement("h3"); h.textContent = dim;
    const node = treeNode(root);
    if (node.tagName === "DETAILS") node.open = true;
    trees.append(h, node);
  });
  setTable(result.table);
  $("hier-next").hidden = false;
}

function setTable(summary) {
  const dims = summary.dims;
  selectOptions("view-rows", dims);
  selectOptions("view-cols", dims);
  if (dims.length > 1) $("view-cols").value = dims[1];
  $("view-choice").hidden = dims.length < 2;
  $("cell-count").textContent = summary.cells;
}

// -- the status map: a grid of cells drawn as an HTML table -------------------------------
function drawMap(id, grid) {
  const box = $(id);
  box.replaceChildren();
  if (!grid) return;
  const present = new Set(grid.status.join(""));
  const legend = document.createElement("div");
  legend.className = "legend";
  Object.entries(grid.names).filter(([letter]) => present.has(letter)).forEach(([letter, name]) => {
    const item = document.createElement("span");
    const swatch = document.createElement("span");
    swatch.className = "swatch st-" + letter;
    item.append(swatch, " " + name);
    legend.appendChild(item);
  });
  const t = document.createElement("table");
  t.className = "grid-map";
  const head = t.createTHead().insertRow();
  const corner = document.createElement("th");
  corner.textContent = `${grid.row_dim} \\ ${grid.column_dim}`;
  corner.className = "corner";
  head.appendChild(corner);
  grid.columns.forEach(([code, depth]) => {
    const th = document.createElement("th");
    th.className = "colcode d" + Math.min(depth, 5);
    const span = document.createElement("span");
    span.textContent = codeText(code);
    th.appendChild(span);
    head.appendChild(th);
  });
  const body = t.createTBody();
  grid.rows.forEach(([code, depth], r) => {
    const tr = body.insertRow();
    const th = document.createElement("th");
    th.className = "rowcode d" + Math.min(depth, 5);
    th.textContent = codeText(code);
    tr.appendChild(th);
    [...grid.status[r]].forEach((letter, c) => {
      const td = tr.insertCell();
      td.className = "st-" + letter;
      const value = grid.values[r][c];
      td.title = `${grid.row_dim} ${codeText(code)}, ${grid.column_dim} ${codeText(grid.columns[c][0])}: ` +
        (grid.names[letter] || "no such cell") + (value === null ? "" : `, value ${numberText.format(value)}`);
    });
  });
  const scroll = document.createElement("div");
  scroll.className = "map-scroll";
  scroll.appendChild(t);
  box.append(legend, scroll);
  const left = Object.entries(grid.left_out).filter(([, n]) => n > 0).map(([dim, n]) => `${n} codes of ${dim}`);
  if (left.length) {
    const note = document.createElement("p");
    note.className = "note";
    note.textContent = `Not drawn: ${left.join(", ")} (the map shows the first codes in hierarchy order).`;
    box.appendChild(note);
  }
}

function view() {
  return {rows: $("view-rows").value, columns: $("view-cols").value};
}

// -- step 3: rules ----------------------------------------------------------------------
function ruleChoices() {
  const value = (id) => $(id).value;
  return {
    p: $("rule-p-on").checked ? value("rule-p") : null,
    pq: $("rule-pq-on").checked ? [value("rule-pq-p"), value("rule-pq-q")] : null,
    nk: $("rule-nk-on").checked ? [value("rule-nk-n"), value("rule-nk-k")] : null,
    freq: $("rule-freq-on").checked ? value("rule-freq") : null,
    freq_level: value("rule-freq-level"),
  };
}

function setRuleChoices(rules) {
  const on = (id, used) => { $(id).checked = used; };
  on("rule-p-on", rules.p !== undefined); setValue("rule-p", rules.p);
  on("rule-pq-on", rules.pq !== undefined);
  if (rules.pq) { setValue("rule-pq-p", rules.pq[0]); setValue("rule-pq-q", rules.pq[1]); }
  on("rule-nk-on", rules.nk !== undefined);
  if (rules.nk) { setValue("rule-nk-n", rules.nk[0]); setValue("rule-nk-k", rules.nk[1]); }
  on("rule-freq-on", rules.freq !== undefined); setValue("rule-freq", rules.freq);
  setValue("rule-freq-level", rules.freq_level);
}

function showRules(result) {
  $("primary-count").textContent = result ? result.primary : "-";
  if (result) $("cell-count").textContent = result.cells;
  $("per-rule").textContent = result
    ? "(" + Object.entries(result.per_rule).map(([k, v]) => `${k}: ${v}`).join("; ") + ")" : "";
  drawMap("rules-map", result && result.map);
}

async function applyRules() {
  $("primary-count").textContent = "...";
  const ok = await guarded("rules-msg", async () => {
    showRules(await api("rules", {rules: ruleChoices(), view: view()}));
  });
  if (!ok) showRules(null);  // refused rules leave no counts and no map: nothing follows them
}

function rulesChanged() {
  clearTimeout(rulesTimer);
  rulesTimer = setTimeout(applyRules, 300);
}

async function changeView() {
  await guarded("rules-msg", async () => drawMap("rules-map", (await api("view", {view: {...view(), step: "rules"}})).map));
}

// -- step 4: protection jobs ------------------------------------------------------------
function method() {
  return document.querySelector("input[name=method]:checked").value;
}

function showMethod() {
  ["suppression", "rounding", "cta"].forEach((m) => { $("opt-" + m).hidden = method() !== m; });
}

function protectChoices() {
  const m = method();
  if (m === "suppression") {
    return {method: m, algorithm: $("s-algorithm").value, cost: $("s-cost").value, time_limit: $("s-time").value};
  }
  if (m === "rounding") {
    return {method: m, column: $("r-column").value, rule: $("r-rule").value, base: $("r-base").value,
      seed: $("r-seed").value, time_limit: $("r-time").value};
  }
  return {method: m, algorithm: $("c-algorithm").value, seed: $("c-seed").value, time_limit: $("c-time").value};
}

function setProtectChoices(p) {
  $("m-" + p.method).checked = true;
  showMethod();
  const limit = p.time_limit === null ? "" : p.time_limit;
  if (p.method === "suppression") {
    setValue("s-algorithm", p.algorithm); setValue("s-cost", p.cost); setValue("s-time", limit);
  } else if (p.method === "rounding") {
    setValue("r-column", p.column); setValue("r-rule", p.rule); setValue("r-base", p.base);
    setValue("r-seed", p.seed); setValue("r-time", limit);
  } else {
    setValue("c-algorithm", p.algorithm); setValue("c-seed", p.seed); setValue("c-time", limit);
  }
}

function jobText(job) {
  if (job.state === "running") return `running (${job.seconds} s)`;
  if (job.state === "cancelled") return `cancelled: the computation was stopped and nothing was kept (${job.seconds} s)`;
  return job.state + (job.error ? ": " + job.error : "") + ` (${job.seconds} s)`;
}

function showJob(job, stateId) {
  $(stateId).textContent = jobText(job);
  if (stateId === "job-state") {
    $("progress").value = job.fraction === null ? 0 : job.fraction;
    const log = $("job-log");
    log.textContent = job.lines.join("\n");
    log.scrollTop = log.scrollHeight;  // the newest line in view
    $("cancel").disabled = job.state !== "running";
  }
}

function follow(job, stateId, done) {
  clearInterval(pollTimer);
  showJob(job, stateId);
  pollTimer = setInterval(async () => {
    let state;
    try { state = await api("job"); } catch (error) { clearInterval(pollTimer); $(stateId).textContent = error.message; return; }
    showJob(state, stateId);
    if (state.state !== "running") {
      clearInterval(pollTimer);
      if (state.state === "done") done(state);
    }
  }, 500);
}

async function startJob(path, body, stateId, done, messageId) {
  await guarded(messageId, async () => {
    const job = await api(path, body);
    follow(job, stateId, done);
  });
}

function protectionDone() {
  say("protect-msg", "done: see step 5, Check", "ok");
}

function basesDone(state) {
  fill("r-bases", state.bases);
  if (state.chosen !== null) $("r-base").value = state.chosen;
}

// -- step 5: check ----------------------------------------------------------------------
async function loadCheck() {
  await guarded("check-msg", async () => {
    const result = await api("check");
    const verdict = $("check-verdict");
    const words = {suppression: ["every primary cell is protected", "some primary cells are NOT protected"],
      rounding: ["the rounded table is additive and no cell can be recovered exactly",
        "the rounded table is not additive, or some cells can be recovered exactly"],
      cta: ["every check passed", "some checks failed"]}[result.method];
    verdict.textContent = result.passed ? words[0] : words[1];
    verdict.className = "verdict " + (result.passed ? "pass" : "fail");
    $("check-summary").textContent = result.summary;
    $("check-failing").replaceChildren();
    if (result.failing && result.failing.rows.length) {
      const h = document.createElement("h3"); h.textContent = "Cells that fail";
      $("check-failing").append(h, table(result.failing.header, result.failing.rows));
    }
    drawMap("check-map", result.map);
    $("check-attack").hidden = result.method !== "suppression";
    $("attack-explanation").textContent = result.attack ? result.attack.explanation : "";
    $("attack-summary").textContent = result.attack ? result.attack.summary : "";
    if (result.attack) {
      $("attack-state").textContent = result.attack.passed
        ? "verdict: the intervals can be published" : "verdict: publishing the intervals would disclose values";
    }
    const data = result.intervals || result.statistics;
    $("check-table-title").textContent = result.intervals
      ? `Intervals an intruder can compute for the ${result.hidden} hidden cells`
      : "Quality statistics";
    $("check-legend").hidden = !result.intervals;
    fill("check-table", data);
  });
}

// -- step 6: download -------------------------------------------------------------------
async function prepareDownloads() {
  try {
    const result = await api("check");
    $("download-list").hidden = false;
    say("download-msg", result.summary.split("\n")[0], "ok");
  } catch (error) {
    $("download-list").hidden = true;
    say("download-msg", error.message, "error");
  }
  setLinks();
}

async function setLinks() {
  const symbol = encodeURIComponent($("dl-symbol").value || "x");
  document.querySelectorAll(".downloads a").forEach((a) => {
    a.href = `/api/${session}/download/${a.dataset.kind}?symbol=${symbol}`;
  });
  try {
    const script = await api(`script?symbol=${symbol}`);
    $("script-name").textContent = script.name;
    $("script-text").value = script.text;
  } catch (error) { $("script-text").value = error.message; }
}

async function copyScript() {
  const text = $("script-text");
  try {
    await navigator.clipboard.writeText(text.value);
  } catch (error) {  // no clipboard permission: select the text for Ctrl+C
    text.select();
    document.execCommand("copy");
  }
  $("script-copied").textContent = "copied";
}

// -- a page that comes back: Back, reload ------------------------------------------------
async function restore(state) {
  if (!state.source) return;
  showData(state.source);
  const spec = state.spec;
  const data = spec.data || {};
  if (state.source.kind === "data" && data.dims) {
    setValue("data-kind", data.kind); showKind();
    ["value", "holding", "weight", "freq"].forEach((k) => setValue("data-" + k, data[k] || ""));
    setValue("data-negative", data.negative);
    dimOrder = [...data.dims];
    dimOrder.forEach((dim) => { $("dim-" + dim).checked = true; });
    showDimOrder();
    hierarchyRows();
    Object.entries(spec.hierarchies || {}).forEach(([dim, h]) => {
      setValue("h-kind-" + dim, h.kind);
      setValue("h-levels-" + dim, (h.columns || []).join(", "));
      setValue("h-lengths-" + dim, (h.lengths || []).join(", "));
      showHierarchyKind(dim);
      if (h.kind === "file") say("h-msg-" + dim, "the file uploaded before is kept", "ok");
    });
  }
  if (state.table) showTable(state.table);
  if (spec.rules) setRuleChoices(spec.rules);
  showRules(state.rules || null);
  if (state.refused.rules) say("rules-msg", state.refused.rules, "error");
  if (spec.protect) setProtectChoices(spec.protect);
  if (state.job) {
    if (state.job.state === "running") follow(state.job, "job-state", protectionDone);
    else showJob(state.job, "job-state");
  }
  if (state.protected) protectionDone();
  show(sessionStorage.getItem(KEY + "-step") || "data");
}

async function newSession() {
  const data = await answer(await fetch("/api/session", {method: "POST"}));
  sessionStorage.setItem(KEY, data.id);
  return data;
}

async function attach() {
  // the session this tab had before (reload, Back), or a new one
  const saved = sessionStorage.getItem(KEY);
  if (saved) {
    session = saved;
    try {
      const [state, info] = await Promise.all([api("state"), fetch("/api/session/info").then(answer)]);
      return {info, state};
    } catch (error) {
      if (!(error instanceof SessionEnded)) throw error;
    }
  }
  const info = await newSession();
  session = info.id;
  return {info, state: null};
}

// The file in the data step's chooser, uploaded and described.
async function readChosenFile() {
  const file = $("data-file").files[0];
  if (!file) return;
  await guarded("data-msg", async () => showData(await upload(file, "name=" + encodeURIComponent(file.name))));
}

function wire() {
  document.querySelectorAll("#steps button").forEach((b) => b.addEventListener("click", () => show(b.dataset.step)));
  $("data-file").addEventListener("change", readChosenFile);
  $("data-example").addEventListener("click", () => guarded("data-msg", async () => showData(await api("example", {}))));
  $("data-kind").addEventListener("change", showKind);
  $("data-next").addEventListener("click", () => {
    if (!chosenDims().length) { say("data-msg", "choose at least one dimension", "error"); return; }
    hierarchyRows();
    show("hier");
  });
  $("jj-next").addEventListener("click", () => { show("rules"); applyRules(); });
  $("build-table").addEventListener("click", () => guarded("hier-msg", async () => {
    showTable(await api("table", {data: dataChoices(), hierarchies: hierarchyChoices()}));
  }));
  $("hier-next").addEventListener("click", () => { show("rules"); applyRules(); });
  document.querySelectorAll(".rules input").forEach((i) => i.addEventListener("input", rulesChanged));
  ["view-rows", "view-cols"].forEach((id) => $(id).addEventListener("change", changeView));
  $("rules-next").addEventListener("click", () => show("protect"));
  document.querySelectorAll("input[name=method]").forEach((r) => r.addEventListener("change", showMethod));
  $("r-compare").addEventListener("click", () => startJob("bases", {
    candidates: splitList($("r-candidates").value), rule: $("r-rule").value, column: $("r-column").value,
  }, "job-state", basesDone, "protect-msg"));
  $("protect-run").addEventListener("click", () => startJob("protect", protectChoices(), "job-state",
    protectionDone, "protect-msg"));
  $("cancel").addEventListener("click", () => guarded("protect-msg", async () => {
    clearInterval(pollTimer);
    showJob(await api("cancel", {}), "job-state");
  }));
  $("attack-run").addEventListener("click", () => startJob("attack", {q: $("attack-q").value},
    "attack-state", () => loadCheck(), "check-msg"));
  $("dl-symbol").addEventListener("input", setLinks);
  $("script-copy").addEventListener("click", copyScript);
  // A closed tab's session ends soon after (a reload comes back within the grace); an open
  // page says it is alive every minute, so only closed or killed tabs' sessions end.
  window.addEventListener("pagehide", (event) => {
    if (!event.persisted) navigator.sendBeacon(`/api/${session}/leave`);
  });
  window.addEventListener("pageshow", async (event) => {
    if (!event.persisted) return;  // back from the browser's cache: is the session still there?
    try { await api("ping"); } catch (error) {
      if (error instanceof SessionEnded) {
        sessionStorage.removeItem(KEY);
        say("data-msg", error.message, "error");
        location.reload();
      }
    }
  });
  setInterval(() => fetch(`/api/${session}/ping`).catch(() => {}), 60000);
}

async function start() {
  const {info, state} = await attach();
  document.body.dataset.session = session;
  maxUploadMb = info.max_upload_mb;
  $("max-upload").textContent = maxUploadMb;
  selectOptions("s-algorithm", info.options.suppression);
  selectOptions("s-cost", info.options.cost);
  selectOptions("r-rule", info.options.rounding);
  $("r-rule").value = "controlled";
  selectOptions("c-algorithm", info.options.cta);
  $("c-algorithm").value = "heuristic";
  wire();
  if (state) await restore(state);
  else await readChosenFile();  // a file chosen while the page was still starting
}

start().catch((error) => say("data-msg", error.message, "error"));
