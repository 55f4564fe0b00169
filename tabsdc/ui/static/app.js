// The page of the tabsdc web app: six steps over the JSON API of tabsdc/ui/app.py.
// Each browser tab asks for its own session when it loads; every call carries its id.
"use strict";

const $ = (id) => document.getElementById(id);
let session = null;
let maxUploadMb = 0;
let columns = [];
let pollTimer = null;
let rulesTimer = null;

// -- plumbing ---------------------------------------------------------------------------
async function api(path, body, method) {
  const options = {method: method || (body === undefined ? "GET" : "POST")};
  if (body !== undefined) {
    options.headers = {"Content-Type": "application/json"};
    options.body = JSON.stringify(body);
  }
  const response = await fetch(`/api/${session}/${path}`, options);
  const data = await response.json();
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
  }
}

function show(step) {
  document.querySelectorAll(".step").forEach((s) => s.classList.toggle("active", s.id === "step-" + step));
  document.querySelectorAll("#steps button").forEach((b) => b.classList.toggle("active", b.dataset.step === step));
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

function selectOptions(id, values, blank) {
  const select = $(id);
  select.replaceChildren();
  if (blank) select.add(new Option(blank, ""));
  values.forEach((v) => select.add(new Option(v, v)));
}

// -- step 1: data -----------------------------------------------------------------------
async function upload(file, query) {
  if (file.size > maxUploadMb * 1e6) {
    throw new Error(`${file.name} is larger than the upload limit of ${maxUploadMb} MB; start the app with a larger --max-upload-mb, or upload a smaller file`);
  }
  const response = await fetch(`/api/${session}/upload?${query}`, {method: "POST", body: file});
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function showData(data) {
  $("data-form").hidden = data.kind !== "data";
  $("jj-form").hidden = data.kind !== "jj";
  if (data.kind === "jj") {
    $("jj-summary").textContent = `${data.name}: ${data.table.text}`;
    setTable(data.table);
    return;
  }
  columns = data.columns;
  fill("data-columns", {header: ["column", "type", "distinct", "missing", "examples"],
    rows: data.columns.map((c) => [c.name, c.type, c.distinct, c.missing, c.examples])});
  fill("data-preview", {header: data.header, rows: data.head});
  const numeric = columns.filter((c) => c.type === "number").map((c) => c.name);
  const names = columns.map((c) => c.name);
  selectOptions("data-value", numeric, "(none: count contributors)");
  selectOptions("data-holding", names, "(none)");
  selectOptions("data-weight", numeric, "(none)");
  selectOptions("data-freq", numeric, "(none)");
  const dims = $("data-dims");
  dims.replaceChildren();
  names.forEach((name) => {
    const label = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox"; box.value = name; box.name = "dim"; box.id = "dim-" + name;
    label.append(box, " " + name);
    dims.appendChild(label);
  });
  say("data-msg", `${data.name}: ${data.rows} rows, ${columns.length} columns`, "ok");
}

function chosenDims() {
  return [...document.querySelectorAll("#data-dims input:checked")].map((b) => b.value);
}

function dataChoices() {
  return {kind: $("data-kind").value, dims: chosenDims(), value: $("data-value").value,
    holding: $("data-holding").value, weight: $("data-weight").value, freq: $("data-freq").value};
}

function hierarchyRows() {
  const box = $("hier-dims");
  box.replaceChildren();
  chosenDims().forEach((dim) => {
    const row = document.createElement("div");
    row.className = "hier-row";
    row.innerHTML = `<b></b>
      <select id="h-kind-${dim}"><option value="flat">flat</option>
        <option value="levels">level columns</option><option value="prefixes">prefix lengths</option>
        <option value="file">parent/child file</option></select>
      <input type="text" id="h-levels-${dim}" placeholder="coarser columns, e.g. A10, A21" hidden>
      <input type="text" id="h-lengths-${dim}" placeholder="lengths, e.g. 3, 4, 5" hidden>
      <input type="file" id="h-file-${dim}" accept=".csv,.txt" hidden>
      <span class="msg" id="h-msg-${dim}"></span>`;
    row.querySelector("b").textContent = dim;
    box.appendChild(row);
    const kind = $("h-kind-" + dim);
    kind.addEventListener("change", () => {
      $("h-levels-" + dim).hidden = kind.value !== "levels";
      $("h-lengths-" + dim).hidden = kind.value !== "prefixes";
      $("h-file-" + dim).hidden = kind.value !== "file";
    });
    $("h-file-" + dim).addEventListener("change", async (event) => {
      const file = event.target.files[0];
      try {
        const result = await upload(file, `name=${encodeURIComponent(file.name)}&dim=${encodeURIComponent(dim)}`);
        say("h-msg-" + dim, `${result.codes} codes under ${result.root}`, "ok");
      } catch (error) { say("h-msg-" + dim, error.message, "error"); }
    });
  });
}

function splitList(text) {
  return text.split(/[\s,;]+/).filter((x) => x);
}

function hierarchyChoices() {
  const choices = {};
  chosenDims().forEach((dim) => {
    const kind = $("h-kind-" + dim).value;
    choices[dim] = {kind, columns: splitList($("h-levels-" + dim).value),
      lengths: splitList($("h-lengths-" + dim).value).map(Number)};
  });
  return choices;
}

// -- step 2: table and trees ------------------------------------------------------------
function treeNode(node) {
  const label = `${node.code}` + (node.count !== null ? ` (${node.count} contributors` : " (") +
    (node.value !== null ? `, value ${Number(node.value.toPrecision(6))})` : ")");
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

function setTable(summary) {
  const dims = summary.dims;
  selectOptions("view-rows", dims);
  selectOptions("view-cols", dims);
  if (dims.length > 1) $("view-cols").value = dims[1];
  $("view-choice").hidden = dims.length < 2;
  $("cell-count").textContent = summary.cells;
}

// -- step 3: rules ----------------------------------------------------------------------
function ruleChoices() {
  const number = (id) => Number($(id).value);
  return {
    p: $("rule-p-on").checked ? number("rule-p") : null,
    pq: $("rule-pq-on").checked ? [number("rule-pq-p"), number("rule-pq-q")] : null,
    nk: $("rule-nk-on").checked ? [number("rule-nk-n"), number("rule-nk-k")] : null,
    freq: $("rule-freq-on").checked ? number("rule-freq") : null,
    freq_level: number("rule-freq-level"),
  };
}

async function applyRules() {
  await guarded("rules-msg", async () => {
    $("primary-count").textContent = "...";
    const result = await api("rules", {rules: ruleChoices(),
      view: {rows: $("view-rows").value, columns: $("view-cols").value}});
    $("primary-count").textContent = result.primary;
    $("cell-count").textContent = result.cells;
    $("per-rule").textContent = "(" + Object.entries(result.per_rule).map(([k, v]) => `${k}: ${v}`).join("; ") + ")";
    $("rules-map").hidden = !result.map;
    if (result.map) $("rules-map").src = result.map;
  });
}

function rulesChanged() {
  clearTimeout(rulesTimer);
  rulesTimer = setTimeout(applyRules, 300);
}

// -- step 4: protection jobs ------------------------------------------------------------
function method() {
  return document.querySelector("input[name=method]:checked").value;
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

function showJob(job, stateId) {
  $(stateId).textContent = job.state === "running"
    ? `running (${job.seconds} s)` : job.state + (job.error ? ": " + job.error : "") + ` (${job.seconds} s)`;
  if (stateId === "job-state") {
    $("progress").value = job.fraction === null ? 0 : job.fraction;
    $("job-log").textContent = job.lines.join("\n");
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
    $("check-map").hidden = !result.map;
    if (result.map) $("check-map").src = result.map;
    $("check-attack").hidden = result.method !== "suppression";
    if (result.attack) {
      $("attack-summary").textContent = result.attack.summary;
      $("attack-state").textContent = result.attack.passed
        ? "verdict: the intervals can be published" : "verdict: publishing the intervals would disclose values";
    }
    const data = result.intervals || result.statistics;
    $("check-table-title").textContent = result.intervals
      ? `Intervals an intruder can compute for the ${result.hidden} hidden cells`
      : "Quality statistics";
    fill("check-table", data);
  });
}

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

function setLinks() {
  document.querySelectorAll(".downloads a").forEach((a) => {
    const symbol = encodeURIComponent($("dl-symbol").value || "x");
    a.href = `/api/${session}/download/${a.dataset.kind}?symbol=${symbol}`;
  });
}

// -- wiring -----------------------------------------------------------------------------
function wire() {
  document.querySelectorAll("#steps button").forEach((b) => b.addEventListener("click", () => show(b.dataset.step)));
  $("data-file").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (!file) return;
    await guarded("data-msg", async () => showData(await upload(file, "name=" + encodeURIComponent(file.name))));
  });
  $("data-example").addEventListener("click", () => guarded("data-msg", async () => showData(await api("example", {}))));
  $("data-kind").addEventListener("change", () => {
    const cells = $("data-kind").value === "cells";
    document.querySelectorAll(".micro").forEach((e) => { e.hidden = cells; });
    document.querySelectorAll(".cells").forEach((e) => { e.hidden = !cells; });
  });
  $("data-next").addEventListener("click", () => {
    if (!chosenDims().length) { say("data-msg", "choose at least one dimension", "error"); return; }
    hierarchyRows();
    show("hier");
  });
  $("jj-next").addEventListener("click", () => { show("rules"); applyRules(); });
  $("build-table").addEventListener("click", () => guarded("hier-msg", async () => {
    const result = await api("table", {data: dataChoices(), hierarchies: hierarchyChoices()});
    $("table-summary").textContent = `Table: ${result.table.cells} cells, ${result.table.relations} relations (${result.table.dims.join(" x ")})`;
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
  }));
  $("hier-next").addEventListener("click", () => { show("rules"); applyRules(); });
  document.querySelectorAll(".rules input").forEach((i) => i.addEventListener("input", rulesChanged));
  ["view-rows", "view-cols"].forEach((id) => $(id).addEventListener("change", applyRules));
  $("rules-next").addEventListener("click", () => show("protect"));
  document.querySelectorAll("input[name=method]").forEach((r) => r.addEventListener("change", () => {
    ["suppression", "rounding", "cta"].forEach((m) => { $("opt-" + m).hidden = method() !== m; });
  }));
  $("r-compare").addEventListener("click", () => startJob("bases", {
    candidates: splitList($("r-candidates").value).map(Number), rule: $("r-rule").value, column: $("r-column").value,
  }, "job-state", (state) => {
    fill("r-bases", state.bases);
    if (state.chosen !== null) $("r-base").value = state.chosen;
  }, "protect-msg"));
  $("protect-run").addEventListener("click", () => startJob("protect", protectChoices(), "job-state",
    () => say("protect-msg", "done: see step 5, Check", "ok"), "protect-msg"));
  $("cancel").addEventListener("click", () => guarded("protect-msg", async () => {
    clearInterval(pollTimer);
    showJob(await api("cancel", {}), "job-state");
  }));
  $("attack-run").addEventListener("click", () => startJob("attack", {q: Number($("attack-q").value)},
    "attack-state", () => loadCheck(), "check-msg"));
  $("dl-symbol").addEventListener("input", setLinks);
}

async function start() {
  const response = await fetch("/api/session", {method: "POST"});
  const data = await response.json();
  session = data.id;
  document.body.dataset.session = session;
  maxUploadMb = data.max_upload_mb;
  $("max-upload").textContent = maxUploadMb;
  selectOptions("s-algorithm", data.options.suppression);
  selectOptions("s-cost", data.options.cost);
  selectOptions("r-rule", data.options.rounding);
  $("r-rule").value = "controlled";
  selectOptions("c-algorithm", data.options.cta);
  $("c-algorithm").value = "heuristic";
  wire();
  // A closed tab's session ends soon after (a reload comes back within the grace); an open
  // page says it is alive every minute, so only closed or killed tabs' sessions end.
  window.addEventListener("pagehide", (event) => {
    if (!event.persisted) navigator.sendBeacon(`/api/${session}/leave`);
  });
  setInterval(() => fetch(`/api/${session}/ping`).catch(() => {}), 60000);
}

start();
