// perfledger explorer: a dashboard client built only on the public /v1 API (same origin).
"use strict";

const $ = (id) => document.getElementById(id);
const num = (x, d = 2) => x == null ? "" : Number(x).toLocaleString("en-US", {maximumFractionDigits: d, minimumFractionDigits: d});
const whole = (x) => x == null ? "" : Math.round(x).toLocaleString("en-US");
const esc = (s) => String(s ?? "").replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
const link = (href, text) => `<a href="${esc(href)}">${esc(text)}</a>`;
// round: the latest one (set once the rounds are known), "all" for every round; target: the
// accuracy target of a model family that has two (the stricter by default, "both" for both).
const DEFAULTS = {model: "deepseek-r1", round: "", target: "", scenario: "Interactive", division: "closed",
                  availability: "available", basis: "assumed", rate: "10", region: "eastus2",
                  all: "", answer: "500", accelerator: "", sku: "Standard_ND96isr_H100_v5",
                  seq: "8192/1024"};
const CHOICES = {scenario: ["Interactive", "Server", "Offline"], division: ["closed", "open", "all"],
                 availability: ["available", "preview", "rdi", "all"], basis: ["assumed", "list_price", "providers"],
                 all: ["", "1"], seq: ["8192/1024", "1024/1024", "1024/8192"]};
const TOP = 15;  // bars per chart unless "show every system"
// Colour-blind-safe (Okabe-Ito, then Tol's muted); every bar also carries a pattern and a text
// label, so greyscale prints stay readable.
const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000",
                 "#882255", "#44AA99", "#999933", "#332288", "#AA4499"];
const PATTERNS = ["", "/", ".", "x", "\\", "+", "-", "|"];
let META = {models: [], model_families: [], rounds: [], regions: [], accelerators: []};
const colourOf = new Map();

// ------------------------------------------------------------------ state in the URL

function state() {
  const q = new URLSearchParams(location.search);
  return Object.fromEntries(Object.entries(DEFAULTS).map(([k, v]) => [k, q.get(k) ?? v]));
}

function setState(patch) {
  const s = {...state(), ...patch};
  const q = new URLSearchParams(Object.entries(s).filter(([k, v]) => v !== "" && v !== DEFAULTS[k]));
  history.replaceState(null, "", q.toString() ? `?${q}` : location.pathname);
  render();
}

// Bad URL parameters fall back to the defaults, and the page says which.
function checked(s, skus) {
  const notes = [], out = {...s};
  const known = {
    model: META.models.length ? [...META.models, ...META.model_families] : null,
    round: ["", "all", ...META.rounds], target: ["", "both", ...targets(out.model)], region: META.regions.length ? META.regions : null,
    accelerator: ["", ...META.accelerators], sku: skus.length ? skus : null, ...CHOICES};
  for (const [k, allowed] of Object.entries(known)) {
    if (allowed && !allowed.includes(out[k])) {
      notes.push(`${k}=${out[k]} is not known here; showing ${DEFAULTS[k] || "the default"}`);
      out[k] = DEFAULTS[k];
    }
  }
  if (!(Number(out.rate) > 0)) { notes.push(`rate=${out.rate} is not a positive number; showing ${DEFAULTS.rate}`); out.rate = DEFAULTS.rate; }
  const n = Number(out.answer);
  if (!(Number.isInteger(n) && n >= 1 && n <= 100000)) { notes.push(`answer=${out.answer} is not a whole number of tokens from 1 to 100,000; showing ${DEFAULTS.answer}`); out.answer = DEFAULTS.answer; }
  return {s: out, notes};
}

// ------------------------------------------------------------------ API

async function api(path) {
  const r = await fetch(path, {headers: {Accept: "application/json"}});
  const body = await r.json();
  if (!r.ok) throw new Error(body.error ? body.error.message : `HTTP ${r.status}`);
  return body;
}

// Every row of a list; an empty list keeps the API's reason (``hint``) as ``rows.hint``.
async function all(path) {
  let body = await api(path), rows = body.rows;
  while (body.next) {
    const next = new URL(body.next);
    body = await api(next.pathname + next.search);
    rows = rows.concat(body.rows);
  }
  rows.hint = body.hint;
  return rows;
}

// The filters every section over MLPerf results shares.
function common(s, extra = {}) {
  const q = new URLSearchParams({model: modelOf(s), division: s.division, availability: s.availability, ...extra});
  if (s.round && s.round !== "all") q.set("round", s.round);
  return q;
}

// The accuracy targets of a model family that MLPerf runs at two (llama2-70b: 99 and 99.9).
function targets(family) {
  return META.models.filter((m) => /^99(\.9)?$/.test(m.slice(family.length + 1)) && m.startsWith(`${family}-`))
    .map((m) => m.slice(family.length + 1)).sort();
}

// The model the view asks for: one accuracy target of a family that has two, unless both;
// by default the stricter (99.9), the one newer rounds keep (v6.1 runs llama2-70b at 99.9 only).
function modelOf(s) {
  const t = targets(s.model);
  if (t.length < 2 || s.target === "both") return s.model;
  return `${s.model}-${t.includes(s.target) ? s.target : t[t.length - 1]}`;
}

function csv(id, path) {
  const u = new URL(path, location.origin);
  u.searchParams.set("format", "csv");
  $(id).href = u.pathname + u.search;
}

// ------------------------------------------------------------------ formatting

function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return isNaN(d) ? String(iso) : d.toLocaleString("en-GB", {dateStyle: "medium", timeStyle: "short", timeZone: "UTC"}) + " UTC";
}

function day(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return isNaN(d) ? String(iso) : d.toLocaleDateString("en-GB", {dateStyle: "medium", timeZone: "UTC"});
}

const SI = [[1e18, "E"], [1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];

// A claim's value in the units people read: PFLOP/s, $ per million tokens, tokens/s, ×.
function human(value, unit, metric = "") {
  if (value == null) return "";
  if (unit === "FLOP/s") {
    const [f, p] = SI.find(([f]) => Math.abs(value) >= f) || [1, ""];
    return `${num(value / f, value / f < 10 ? 2 : 0)} ${p}FLOP/s`;
  }
  if (unit === "USD" && metric.includes("per_million")) {
    const what = metric.includes("input") ? "input" : metric.includes("output") ? "output" : "";
    return `$${num(value, 2)} per million ${what} tokens`.replace("  ", " ");
  }
  if (unit === "USD") return `$${num(value, 2)}`;
  if (unit === "tokens/s") return `${whole(value)} tokens/s${metric.includes("per_user") ? " per user" : ""}`;
  if (unit === "x") return `${num(value, value < 10 ? 2 : 0)}×`;
  return `${num(value, value < 10 ? 2 : 0)} ${unit ?? ""}`;
}

const words = (metric) => String(metric ?? "").replace(/_/g, " ");
const system = (r) => `${r.organization}: ${r.system_name}`;
// A bar's name in full: the system, and what tells two of its rows apart (accuracy target
// when both are shown, round when every round is).
const barName = (r) => system(r) + (r.model_id && r.model_family && r.model_id !== r.model_family
  && state().target === "both" ? ` ·${r.model_id.slice(r.model_family.length)}` : "")
  + (state().round === "all" ? ` · ${r.round}` : "");
const accel = (r) => r.total_accelerators ? `${r.accelerator_id || r.accelerator_model_name || "mixed"} × ${r.total_accelerators}` : "CPU only";

function empty(id, html) {
  $(id).hidden = !html;
  $(id).innerHTML = html || "";
}

function rowsOrNone(table, html, cols, none) {
  $(table).tBodies[0].innerHTML = html || `<tr><td colspan="${cols}" class="none">${esc(none)}</td></tr>`;
  const heads = [...$(table).tHead.rows[0].cells].map((th) => th.textContent.trim());
  if (html) [...$(table).tBodies[0].rows].forEach((tr) => [...tr.cells].forEach((td, i) => { td.dataset.label = heads[i]; }));
  resort($(table));
}

// Why a list is empty, as the API says it (a source that never loaded or is switched off,
// an unknown value, or rows outside the closed + available defaults: then set both to all).
const why = (rows) => rows.hint ? ` Why: ${esc(rows.hint)}.` : "";

// A message for people: each URL named by its host (a source's full request URL, OData
// filters and all, says nothing a reader needs; /healthz and the run record keep it whole).
const hosts = (text) => String(text ?? "").replace(/\b[a-z][a-z0-9+.-]*:\/\/([^/\s?#)"',;]+)[^\s)"',;]*/gi, "$1");

// ------------------------------------------------------------------ charts

function colour(acc) {
  if (!colourOf.has(acc)) colourOf.set(acc, colourOf.size);
  const i = colourOf.get(acc);
  return {color: PALETTE[i % PALETTE.length], pattern: {shape: PATTERNS[i % PATTERNS.length]}};
}

// Long titles and labels break into lines of at most ``max`` characters (Plotly does not wrap
// them); a word is never cut.
function wrap(text, max) {
  const lines = [];
  let line = "";
  String(text).split(" ").forEach((w) => {
    if ((line + " " + w).trim().length > max && line) { lines.push(line); line = w; } else { line = (line + " " + w).trim(); }
  });
  if (line) lines.push(line);
  return lines.join("<br>");
}

function plot(id, traces, layout) {
  if (!window.Plotly) { $(id).textContent = "(chart library not loaded)"; return; }
  $(id).hidden = false;
  const width = $(id).clientWidth || 800;
  if (layout.title && layout.title.text) {
    layout.title.text = wrap(layout.title.text, Math.max(30, Math.floor(width / 7)));
    const lines = layout.title.text.split("<br>").length;
    layout.margin = {t: 20 + 16 * lines, r: 20, b: 60, l: 10, ...(layout.margin || {})};
    if (layout.height) layout.height += 16 * (lines - 1);
  }

  // an x axis title is centred on the plot area, beside the y labels: on a phone it wraps to
  // stay inside the figure
  const xtitle = layout.xaxis && layout.xaxis.title;
  if (xtitle && xtitle.text) xtitle.text = wrap(xtitle.text, width < 600 ? 22 : 90);
  // the legend sits at the foot of the figure, below the x axis's title (never on it)
  Plotly.react(id, traces, {margin: {t: 36, r: 20, b: 60, l: 10}, font: {size: width < 600 ? 10 : 12},
                            legend: {orientation: "h", x: 0, y: 0, yref: "container", yanchor: "bottom"},
                            ...layout},
               {displaylogo: false, responsive: true});
}

function hide(id) {
  if (window.Plotly) Plotly.purge(id);
  $(id).hidden = true;
}

// Horizontal bars, one per row, best first; short names on the axis, full names on hover;
// coloured (and patterned) by accelerator; the top TOP unless every system is asked for.
function bars(id, rows, o) {
  const shown = o.all ? rows : rows.slice(0, TOP);
  if (!shown.length) { hide(id); return; }
  const keys = shown.map((r) => r.id);
  const groups = new Map();
  shown.forEach((r) => {
    const acc = r.accelerator_id || r.accelerator_model_name || "mixed / none";
    if (!groups.has(acc)) groups.set(acc, []);
    groups.get(acc).push(r);
  });
  const traces = [...groups.entries()].map(([acc, rs]) => ({
    type: "bar", orientation: "h", name: acc, y: rs.map((r) => r.id), x: rs.map(o.value),
    text: rs.map((r) => o.fmt(o.value(r))), textposition: "outside", cliponaxis: false,
    marker: {...colour(acc), line: {color: "#1a1a1a", width: 0.5}},
    hovertext: rs.map((r) => `${system(r)}<br>${r.model_id ?? ""} · ${r.round ?? ""} · ${accel(r)} · ${r.division ?? ""} · ${r.availability ?? ""}<br>${o.fmt(o.value(r))}`),
    hoverinfo: "text"}));
  const more = rows.length > shown.length ? ` — top ${shown.length} of ${rows.length}; tick “show every system” for all` : "";
  const labels = shown.map((r) => wrap(barName(r), $(id).clientWidth < 600 ? 18 : 40));
  const lines = labels.reduce((n, l) => n + Math.max(2, l.split("<br>").length), 0);
  plot(id, traces, {
    height: 130 + 14 * lines + (groups.size > 1 ? 20 * Math.ceil(groups.size / 3) : 0),
    title: {text: `${o.title}${more}`, x: 0, font: {size: 13}},
    barmode: "overlay", bargap: 0.25,
    xaxis: {title: {text: o.axis}, rangemode: "tozero", automargin: true, type: o.log ? "log" : "linear"},
    yaxis: {title: {text: "System (organization: name)"}, automargin: true, type: "category",
            categoryorder: "array", categoryarray: [...keys].reverse(), tickmode: "array",
            tickvals: keys, ticktext: labels},
    showlegend: groups.size > 1});
}

// ------------------------------------------------------------------ sortable tables

function sortable(table) {
  [...table.tHead.rows[0].cells].forEach((th, i) => {
    th.innerHTML = `<button type="button">${th.innerHTML}</button>`;
    th.querySelector("button").addEventListener("click", () => {
      const dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
      [...table.tHead.rows[0].cells].forEach((c) => c.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", dir);
      table.dataset.sortCol = i;
      resort(table);
    });
  });
}

function cellKey(td) {
  const raw = td?.dataset.v ?? td?.textContent ?? "";
  const n = Number(String(raw).replace(/[,$×\s]/g, ""));
  return raw !== "" && !isNaN(n) ? n : String(raw).toLowerCase();
}

function resort(table) {
  const i = table.dataset.sortCol;
  if (i === undefined) return;
  const th = table.tHead.rows[0].cells[i], sign = th.getAttribute("aria-sort") === "descending" ? -1 : 1;
  const body = table.tBodies[0], rows = [...body.rows];
  if (rows.length < 2 || rows[0].cells.length < 2) return;
  rows.sort((a, b) => {
    const x = cellKey(a.cells[i]), y = cellKey(b.cells[i]);
    if (x === y) return 0;
    if (typeof x !== typeof y) return typeof x === "number" ? -1 : 1;
    return (x < y ? -1 : 1) * sign;
  });
  rows.forEach((r) => body.appendChild(r));
}

// ------------------------------------------------------------------ sections

async function ratios(s) {
  const scenario = s.scenario === "Offline" ? "Interactive" : s.scenario;
  const path = `/v1/ratios?${common(s, {scenario, sort: "-ratio", limit: "1000"})}`;
  csv("ratios-csv", path);
  const rows = await all(path);
  rowsOrNone("ratios-table", rows.map((r) => `<tr>
      <td>${esc(r.system_name)}</td><td>${esc(r.organization)}</td><td>${esc(accel(r))}</td>
      <td>${esc(r.division)}</td><td>${esc(r.availability)}</td>
      <td>${esc(r.scenario)}${r.flagged ? " (flagged)" : ""}</td>
      <td class="num" data-testid="ratio" data-v="${r.ratio}">${link(`/v1/ratios?model=${encodeURIComponent(r.model_id)}&organization=${encodeURIComponent(r.organization)}&scenario=${r.scenario}&division=all&availability=all`, num(r.ratio))}</td>
      <td class="num" data-v="${r.offline_result}">${link(`/v1/results/${r.offline_result_id}`, whole(r.offline_result))}</td>
      <td class="num" data-v="${r.other_result}">${link(`/v1/results/${r.other_result_id}`, whole(r.other_result))}</td>
      <td>${esc(r.other_units)}</td></tr>`).join(""), 10, "No rows.");
  empty("ratios-empty", rows.length ? "" : `No system in this view has both an Offline and a ${esc(scenario)} result for ${esc(modelOf(s))}.${why(rows)}`);
  bars("ratios-chart", rows, {value: (r) => r.ratio, fmt: (v) => num(v), all: s.all,
       title: `${scenario} ÷ Offline throughput, ${modelOf(s)} (evidence: measured results; derived ratio)`,
       axis: `${scenario} ÷ Offline throughput (ratio)`});
}

// Each row's cheapest provider (basis providers): /v1/costs prices every result on every
// provider that rents its accelerator; one row per result is kept, its provider named.
function cheapestPerResult(rows) {
  const best = new Map();
  for (const r of rows) {
    if (r.provider === "cheapest" || r.provider === "median") continue;
    const had = best.get(r.id.split(":list_price:")[0]);
    if (!had || r.cost_per_million_tokens < had.cost_per_million_tokens) best.set(r.id.split(":list_price:")[0], r);
  }
  const none = rows.filter((r) => r.provider === "cheapest" && r.price_status === "no price");
  return [...best.values(), ...none];
}

async function costs(s) {
  const extra = {scenario: s.scenario, basis: s.basis === "providers" ? "list_price" : s.basis,
                 sort: "cost_per_million_tokens", limit: "1000"};
  if (s.basis === "assumed") extra.rate = s.rate;
  else if (s.basis === "providers") extra.provider = "all";
  else extra.region = s.region;
  const path = `/v1/costs?${common(s, extra)}`;
  csv("costs-csv", path);
  $("costs-note").textContent = s.basis === "assumed"
    ? `At an assumed $${s.rate} per accelerator-hour (evidence: assumption), for every Tokens/s result of the view.`
    : s.basis === "providers"
    ? "At the cheapest current on-demand price per accelerator-hour of any provider that rents the accelerator (the Azure API and every cloud of the SkyPilot catalog, any region; evidence: list_price); the provider is named beside each cost."
    : `At the cheapest current Azure on-demand Linux price per accelerator-hour in ${s.region} (evidence: list_price); systems whose accelerator Azure does not rent there show "no price".`;
  const pick = s.basis === "providers" ? cheapestPerResult : (rows) => rows;
  const measured = pick(await all(path));
  // your own runs of the model (perfledger import), priced the same way: they have no scenario
  const own = {...extra, evidence: "self_measured"};
  delete own.scenario;
  const cost = (r) => r.cost_per_million_tokens ?? Infinity;  // cheapest first, no price last
  const rows = measured.concat(pick(await all(`/v1/costs?${common(s, own)}`))).sort((a, b) => cost(a) - cost(b));
  rowsOrNone("costs-table", rows.map((r) => `<tr data-evidence="${esc(r.evidence)}">
      <td>${esc(r.evidence === "self_measured" ? `Your run: ${r.system_name}` : system(r))}</td><td>${esc(r.accelerator_id ?? "—")}</td>
      <td>${esc(r.division ?? "—")}</td><td>${esc(r.availability ?? "—")}</td>
      <td class="num">${r.total_accelerators}</td>
      <td class="num" data-v="${r.result}">${r.evidence === "measured" ? link(`/v1/results/${r.result_id}`, whole(r.result)) : whole(r.result)}</td>
      <td class="num" data-v="${r.rate_per_accelerator_hour ?? ""}">${r.rate_per_accelerator_hour == null ? "" : num(r.rate_per_accelerator_hour)}</td>
      <td class="num" data-testid="cost" data-v="${r.cost_per_million_tokens ?? ""}">${r.cost_per_million_tokens == null ? '<span class="none">no price</span>' : num(r.cost_per_million_tokens, 3)}</td>
      <td data-testid="sku">${esc(r.sku ? `${s.basis === "providers" ? `${r.provider}: ` : ""}${r.sku}${r.reservation_term ? " · " + r.reservation_term : ""}` : r.price_basis === "assumed" ? "assumed rate" : "")}</td>
      <td>${esc(r.basis)}</td></tr>`).join(""), 10, "No rows.");
  const priced = rows.filter((r) => r.cost_per_million_tokens != null);
  if (!rows.length) {
    empty("costs-empty", `No Tokens/s result for ${esc(modelOf(s))} ${esc(s.scenario)} in this view.${why(rows)}`);
  } else if (!priced.length) {
    const any = await api("/v1/prices?limit=1&source=azure_prices");  // no price anywhere: the API says why
    const none = any.total ? `No accelerator in this view has an Azure list price in ${esc(s.region)}`
      : `No Azure list price in this snapshot (${esc(any.hint)})`;
    empty("costs-empty", `${none} — switch the price basis to an assumed rate<button type="button" id="use-assumed">Use an assumed rate</button>, or choose another region.`);
    $("use-assumed").addEventListener("click", () => setState({basis: "assumed"}));
  } else {
    empty("costs-empty", "");
  }
  const kinds = priced.some((r) => r.evidence === "self_measured") ? "measured and self_measured" : "measured";
  const evidence = `${kinds} + ${s.basis === "assumed" ? "assumption" : "list_price"}`;
  const whose = s.basis === "providers" ? ", cheapest provider" : "";
  bars("costs-chart", priced, {value: (r) => r.cost_per_million_tokens, fmt: (v) => `$${num(v, 3)}`, all: s.all,
       title: `Cheapest first${whose}, ${modelOf(s)} ${s.scenario} (evidence: derived: ${evidence})`,
       axis: "USD per million tokens"});
}

async function latency(s) {
  const scenario = s.scenario === "Offline" ? "Interactive" : s.scenario;
  const path = `/v1/latency-bounds?${common(s, {scenario, answer_tokens: s.answer, sort: "-max_concurrent_streams", limit: "1000"})}`;
  csv("latency-csv", path);
  const rows = await all(path);
  const rules = new Map();
  rows.forEach((r) => {
    const k = `${r.model_family}|${r.ttft_ms}|${r.tpot_ms}`;
    if (!rules.has(k)) rules.set(k, {r, rounds: new Set()});
    rules.get(k).rounds.add(r.round);
  });
  $("latency-rule").textContent = rules.size ? [...rules.values()].map(({r, rounds}) =>
    `${r.model_family} ${r.scenario} (${[...rounds].sort().join(", ")}): TTFT ≤ ${num(r.ttft_ms, 0)} ms, TPOT ≤ ${num(r.tpot_ms, 0)} ms, so every stream got at least ${num(r.min_tokens_per_s_per_user, 1)} tokens/s (rules document: ${r.rule_basis ?? "latest"}).`).join(" ")
    + (s.scenario === "Offline" ? " Offline has no latency limit: showing Interactive." : "") : "";
  rowsOrNone("latency-table", rows.map((r) => `<tr>
      <td>${esc(system(r))}</td><td>${esc(accel(r))}</td><td>${esc(r.division)}</td><td>${esc(r.availability)}</td>
      <td class="num" data-v="${r.result}">${link(`/v1/results/${r.result_id}`, whole(r.result))}</td>
      <td class="num" data-testid="floor" data-v="${r.min_tokens_per_s_per_user}">${num(r.min_tokens_per_s_per_user, 1)}</td>
      <td class="num" data-testid="streams" data-v="${r.max_concurrent_streams}">${whole(r.max_concurrent_streams)}</td>
      <td class="num" data-testid="answer" data-v="${r.answer_seconds}">${num(r.answer_seconds, 1)}</td>
      <td class="nowrap">${link(`/v1/rules?model=${encodeURIComponent(r.model_family)}&scenario=${r.scenario}`, `TTFT ${num(r.ttft_ms, 0)} ms · TPOT ${num(r.tpot_ms, 0)} ms`)}</td></tr>`).join(""), 9, "No rows.");
  empty("latency-empty", rows.length ? "" : `No ${esc(scenario)} Tokens/s result with a latency limit for ${esc(modelOf(s))} in this view.${why(rows)}`);
  bars("latency-chart", rows, {value: (r) => r.max_concurrent_streams, fmt: (v) => whole(v), all: s.all,
       title: `Concurrent streams at the per-user floor, ${modelOf(s)} ${scenario} (evidence: derived: measured + benchmark_rule)`,
       axis: "concurrent streams (throughput × TPOT)"});
}

async function trends(s) {
  const scenario = s.scenario;
  const every = await all(`/v1/trends?${new URLSearchParams({model: modelOf(s), scenario, division: s.division, availability: s.availability, limit: "1000"})}`);
  const rounds = new Map();
  every.forEach((r) => rounds.set(r.accelerator_id, (rounds.get(r.accelerator_id) || 0) + 1));
  const accs = [...rounds.keys()].sort((a, b) => rounds.get(b) - rounds.get(a) || a.localeCompare(b));
  const chosen = accs.includes(s.accelerator) ? s.accelerator : (accs[0] ?? "");
  const sel = $("accelerator");
  sel.innerHTML = accs.map((a) => `<option value="${esc(a)}">${esc(a)} (${rounds.get(a)} round${rounds.get(a) > 1 ? "s" : ""})</option>`).join("");
  sel.value = chosen;
  const q = new URLSearchParams({model: modelOf(s), scenario, division: s.division, availability: s.availability, limit: "1000"});
  if (chosen) q.set("accelerator", chosen);
  csv("trends-csv", `/v1/trends?${q}`);
  const rows = every.filter((r) => r.accelerator_id === chosen);
  rowsOrNone("trends-table", rows.map((r) => `<tr>
      <td>${esc(r.round)}</td><td>${esc(r.accelerator_id)}</td>
      <td class="num" data-testid="per-accelerator" data-v="${r.per_accelerator}">${link(`/v1/results/${r.result_id}`, num(r.per_accelerator, 1))}</td>
      <td>${esc(r.units)}</td><td>${esc(r.system_name)}</td><td>${esc(r.organization)}</td>
      <td>${esc(r.division)}</td><td>${esc(r.availability)}</td>
      <td class="num" data-v="${r.change_vs_previous ?? ""}">${r.change_vs_previous == null ? '<span class="none">first round</span>' : (r.change_vs_previous >= 0 ? "+" : "") + num(r.change_vs_previous * 100, 1) + " %"}</td></tr>`).join(""), 9, "No rows.");
  empty("trends-empty", rows.length ? "" : `No accelerator has a ${esc(scenario)} result for ${esc(modelOf(s))} in this view.${why(every)}`);
  if (!rows.length) { hide("trends-chart"); return; }
  const units = [...new Set(rows.map((r) => r.units))];
  plot("trends-chart", units.map((u, i) => {
    const rs = rows.filter((r) => r.units === u);
    return {type: "scatter", mode: "lines+markers+text", name: `${chosen} (${u})`, x: rs.map((r) => r.round),
            y: rs.map((r) => r.per_accelerator), text: rs.map((r) => num(r.per_accelerator, 0)), textposition: "top center",
            marker: {size: 11, symbol: ["circle", "square", "diamond"][i % 3], color: colour(chosen).color},
            hovertext: rs.map((r) => `${r.round}: ${num(r.per_accelerator, 1)} ${r.units} per accelerator<br>${system(r)} (${r.total_accelerators} accelerators)`),
            hoverinfo: "text"};
  }), {height: 360, title: {text: `${chosen}: best per accelerator by round, ${modelOf(s)} ${scenario} (evidence: measured)`, x: 0, font: {size: 13}},
       xaxis: {title: {text: "MLPerf round"}, type: "category"},
       yaxis: {title: {text: `${units.join(", ")} per accelerator`}, rangemode: "tozero", automargin: true}});
}

// The InferenceX frontier: one line per accelerator (output tokens/s per GPU against tokens/s
// per user), MLPerf results as labelled markers on the same axes, never joined to the lines.
async function frontier(s) {
  const [isl, osl] = s.seq.split("/");
  const q = new URLSearchParams({model: s.model, isl, osl, rate: s.rate, limit: "1000"});
  if (s.accelerator) q.set("mlperf_accelerator", s.accelerator);  // MLPerf beside the lines
  csv("frontier-csv", `/v1/frontier?${q}`);
  const rows = await all(`/v1/frontier?${q}`);
  const curve = rows.filter((r) => r.kind === "frontier");
  const ml = rows.filter((r) => r.kind === "mlperf");
  const cost = (r) => s.basis === "list_price" ? r.list_price_cost_per_million_tokens : r.cost_per_million_tokens;
  rowsOrNone("frontier-table", [...curve, ...ml].map((r) => `<tr data-kind="${esc(r.kind)}">
      <td data-testid="source">${r.kind === "mlperf" ? `MLPerf ${esc(r.round)} ${esc(r.scenario)}, ${esc(r.division)}, ${r.preview ? "<strong>preview</strong>" : esc(r.availability)}` : r.source === "self_measured" ? `Your run (${esc(r.tool)}, ${esc(r.file_name)})` : "InferenceX"}</td>
      <td>${esc(r.series)}</td>
      <td title="${esc(r.configuration ?? "")}">${r.kind === "mlperf" ? esc(`${r.organization}: ${r.system_name}`) : esc(`${r.framework} ${r.precision}, ${r.gpus ?? "?"} GPUs, concurrency ${r.conc}`)}</td>
      <td data-testid="citation">${r.kind === "mlperf" ? esc(r.citation ?? "") : ""}</td>
      <td class="num" data-testid="x" data-v="${r.interactivity}">${num(r.interactivity, 1)}</td>
      <td class="num" data-testid="y" data-v="${r.output_tput_per_gpu}">${link(r.kind === "mlperf" ? `/v1/results/${r.id.slice(7)}` : `/v1/observations?model=${encodeURIComponent(s.model)}&accelerator=${encodeURIComponent(r.hardware)}&isl=${isl}&osl=${osl}`, num(r.output_tput_per_gpu, 1))}</td>
      <td class="num" data-v="${cost(r) ?? ""}">${cost(r) == null ? '<span class="none">no price</span>' : "$" + num(cost(r), 3)}</td>
      <td class="num" data-v="${r.joules_per_output_token ?? ""}">${r.joules_per_output_token == null ? '<span class="none">not valid / none</span>' : num(r.joules_per_output_token, 3)}</td>
      <td>${esc(r.energy_scope ?? "")}</td>
      <td><span class="badge ${esc(r.evidence)}">${esc(r.evidence)}</span></td></tr>`).join(""), 10, "No rows.");
  const combined = document.getElementById("frontier-combined");
  combined.hidden = !(ml.length && curve.length);
  combined.textContent = combined.hidden ? "" : rows[0].combined;
  empty("frontier-empty", curve.length ? "" : `InferenceX has no observation of ${esc(s.model)} at ${esc(isl)}/${esc(osl)} tokens in this snapshot.${rows.length ? "" : why(rows)}`);
  if (!curve.length && !ml.length) { hide("frontier-chart"); return; }
  const series = [...new Set(curve.map((r) => r.series))];
  const traces = series.map((acc) => {
    const rs = curve.filter((r) => r.series === acc).sort((a, b) => a.interactivity - b.interactivity);
    return {type: "scatter", mode: "lines+markers", name: acc, x: rs.map((r) => r.interactivity),
            y: rs.map((r) => r.output_tput_per_gpu), line: {color: colour(acc).color}, marker: {size: 7, color: colour(acc).color},
            hovertext: rs.map((r) => `${acc}: ${esc(r.configuration ?? "")}, concurrency ${r.conc}<br>${num(r.interactivity, 1)} tokens/s per user, ${num(r.output_tput_per_gpu, 0)} tokens/s per GPU (all ${r.gpus} GPUs)<br>InferenceX, ${r.observed_on}`),
            hoverinfo: "text"};
  });
  if (ml.length) {
    traces.push({type: "scatter", mode: "markers+text", name: "MLPerf (not part of the curves)",
                 x: ml.map((r) => r.interactivity), y: ml.map((r) => r.output_tput_per_gpu),
                 text: ml.map((r) => `MLPerf ${r.scenario} · ${r.series}`), textposition: "top right",
                 marker: {size: 11, symbol: "diamond-open", line: {width: 2}, color: ml.map((r) => colour(r.series).color)},
                 hovertext: ml.map((r) => `MLPerf ${r.round} ${r.scenario}, ${r.division}, ${r.preview ? "PREVIEW" : r.availability}: ${r.organization}: ${r.system_name}<br>${esc(r.citation ?? "")}<br>${num(r.output_tput_per_gpu, 0)} tokens/s per accelerator at the ${r.scenario === "Offline" ? "Offline end (no per-user floor)" : num(r.interactivity, 1) + " tokens/s per-user floor"}<br>${esc(r.lengths_note ?? "")}<br>${esc(r.notice)}`),
                 hoverinfo: "text"});
  }
  plot("frontier-chart", traces, {height: 440,
       title: {text: `${s.model}, ${isl}/${osl} tokens: output tokens/s per GPU against tokens/s per user (InferenceX frontier; MLPerf marked)`, x: 0, font: {size: 13}},
       xaxis: {title: {text: "tokens/s per user (interactivity)"}, rangemode: "tozero", automargin: true},
       yaxis: {title: {text: "output tokens/s per GPU"}, rangemode: "tozero", automargin: true}});
}

// The measured counterpart of a speed claim: the same accelerator and model when MLPerf has
// it; else, for a per-user claim, the per-user speed MLPerf's Interactive limit guarantees.
async function counterpart(r, round) {
  if (r.closest_result != null) {
    return {value: r.closest_result, text: `${whole(r.closest_result)} tokens/s, best ${r.closest_scenario} system (measured)`, href: `/v1/results/${r.closest_result_id}`};
  }
  if (!r.model) return null;
  const floors = await api(`/v1/latency-bounds?${new URLSearchParams({model: r.model, scenario: "Interactive", round, division: "all", availability: "all", limit: "1"})}`);
  const f = floors.rows[0];
  if (!f) return null;
  return {value: f.min_tokens_per_s_per_user, text: `${num(f.min_tokens_per_s_per_user, 1)} tokens/s per user, MLPerf Interactive floor for ${f.model_family} (benchmark rule)`, href: `/v1/latency-bounds?model=${encodeURIComponent(f.model_family)}&scenario=Interactive&round=${round}`};
}

async function priceCounterpart(r, s, round) {
  if (!r.model) return null;
  const c = await api(`/v1/costs?${new URLSearchParams({model: r.model, round, basis: "assumed", rate: s.rate, sort: "cost_per_million_tokens", limit: "1"})}`);
  const x = c.rows[0];
  return x ? {value: x.cost_per_million_tokens, text: `$${num(x.cost_per_million_tokens, 3)} per million tokens, cheapest measured system at an assumed $${s.rate}/accelerator-hour`, href: `/v1/results/${x.result_id}`} : null;
}

async function claims(s) {
  const round = s.round && s.round !== "all" ? s.round : META.rounds[META.rounds.length - 1] || "";
  const q = new URLSearchParams({limit: "1000", sort: "vendor"});
  if (round) q.set("round", round);
  const path = `/v1/claim-checks?${q}`;
  csv("claims-csv", path);
  const rows = await all(path);
  const speed = rows.filter((r) => r.unit === "tokens/s");
  const price = rows.filter((r) => r.unit === "USD");
  const research = rows.filter((r) => r.evidence === "paper_reported" && !speed.includes(r) && !price.includes(r));
  const specs = rows.filter((r) => !speed.includes(r) && !price.includes(r) && !research.includes(r));
  const withCounterpart = await Promise.all([
    ...speed.map(async (r) => [r, await counterpart(r, round)]),
    ...price.map(async (r) => [r, await priceCounterpart(r, s, round)])]);
  const claimCell = (r) => link(`/v1/claims/${r.claim_id}`, `${r.vendor}: ${r.product ?? ""}${r.model ? " · " + r.model : ""}`);
  rowsOrNone("claims-table", withCounterpart.map(([r, m]) => `<tr>
      <td>${claimCell(r)}</td>
      <td class="num" data-v="${r.claim_value}">${esc(human(r.claim_value, r.unit, r.metric))}</td>
      <td><span class="badge ${esc(r.evidence)}">${esc(r.evidence)}</span></td>
      <td data-v="${r.claimed_on ?? ""}">${esc(day(r.claimed_on))}</td>
      <td class="num" data-v="${m ? m.value : ""}">${m ? link(m.href, m.text) : '<span class="none">no MLPerf result for this model</span>'}</td>
      <td>${r.closest_result_id ? link(`/v1/results/${r.closest_result_id}`, r.verdict) : esc(r.verdict)}</td></tr>`).join(""), 6, `No speed or price claim${round ? ` (round ${round})` : ""}.${rows.length ? "" : why(rows)}`);
  rowsOrNone("specs-table", specs.map((r) => `<tr>
      <td>${claimCell(r)} <span class="note">${esc(words(r.metric))}</span></td>
      <td class="num" data-v="${r.claim_value}">${esc(human(r.claim_value, r.unit, r.metric))}</td>
      <td><span class="badge ${esc(r.evidence)}">${esc(r.evidence)}</span></td>
      <td data-v="${r.claimed_on ?? ""}">${esc(day(r.claimed_on))}</td>
      <td class="num">${r.recomputed_value == null ? '<span class="none">nothing to recompute</span>' : esc(human(r.recomputed_value, r.unit, r.metric))}</td>
      <td class="num">${r.claim_over_recomputed == null ? "" : num(r.claim_over_recomputed, 3)}</td></tr>`).join(""), 6, "No spec claim.");
  rowsOrNone("research-table", research.map((r) => `<tr>
      <td>${claimCell(r)}</td><td>${esc(words(r.metric))}</td>
      <td class="num" data-v="${r.claim_value}">${esc(human(r.claim_value, r.unit, r.metric))}</td>
      <td data-v="${r.claimed_on ?? ""}">${esc(day(r.claimed_on))}</td></tr>`).join(""), 4, "No research result.");
  const pairs = withCounterpart.filter(([r]) => r.unit === "tokens/s");
  if (!pairs.length) { hide("claims-chart"); return; }
  const seen = new Map();
  const labels = pairs.map(([r]) => {
    const base = wrap(`${r.vendor} ${r.model ?? r.product ?? ""} (${r.evidence.replace(/_/g, " ")})`, $("claims-chart").clientWidth < 600 ? 18 : 40);
    seen.set(base, (seen.get(base) || 0) + 1);
    return seen.get(base) > 1 ? `${base} #${seen.get(base)}` : base;
  });
  const label = (r) => labels[pairs.findIndex(([x]) => x === r)];
  plot("claims-chart", [
    {type: "bar", orientation: "h", name: "claimed", y: pairs.map(([r]) => label(r)), x: pairs.map(([r]) => r.claim_value),
     marker: {color: "#E69F00", pattern: {shape: "/"}}, text: pairs.map(([r]) => `${whole(r.claim_value)} (${r.evidence})`), textposition: "outside", cliponaxis: false,
     hovertext: pairs.map(([r]) => `${r.vendor}: ${r.product ?? ""} ${r.model ?? ""}<br>${human(r.claim_value, r.unit, r.metric)} · ${r.evidence} · ${day(r.claimed_on)}`), hoverinfo: "text"},
    {type: "bar", orientation: "h", name: "MLPerf counterpart (measured / rule)", y: pairs.map(([r]) => label(r)), x: pairs.map(([, m]) => m ? m.value : null),
     marker: {color: "#0072B2"}, text: pairs.map(([, m]) => m ? whole(m.value) : "none"), textposition: "outside", cliponaxis: false,
     hovertext: pairs.map(([, m]) => m ? m.text : "no MLPerf result for this model"), hoverinfo: "text"}],
    {height: 140 + 46 * pairs.length, barmode: "group",
     title: {text: `Speed claims next to MLPerf, round ${round} (evidence: each claim's own label; counterpart: measured, or the benchmark rule's floor)`, x: 0, font: {size: 13}},
     xaxis: {title: {text: "output tokens/s (log scale)"}, type: "log", automargin: true},
     yaxis: {title: {text: "Claim (vendor, model)"}, automargin: true, type: "category"}});
}

async function prices(s) {
  const q = new URLSearchParams({sku: s.sku, source: "azure_prices", region: s.region, offer: "on_demand", os: "linux", limit: "1000", sort: "valid_from"});
  const path = `/v1/prices/history?${q}`;
  csv("prices-csv", path);
  const rows = await all(path);
  rowsOrNone("prices-table", rows.map((r) => `<tr>
      <td data-v="${r.valid_from}">${esc(when(r.valid_from))}</td><td data-v="${r.valid_to ?? "9999"}">${r.valid_to ? esc(when(r.valid_to)) : "current"}</td>
      <td class="num" data-v="${r.retail_price}">${link(`/v1/sources/${r.source_snapshot_id}`, num(r.retail_price))}</td>
      <td class="num" data-v="${r.price_per_accelerator_hour ?? ""}">${r.price_per_accelerator_hour == null ? '<span class="none">not mapped</span>' : num(r.price_per_accelerator_hour)}</td></tr>`).join(""), 4, "No rows.");
  empty("prices-empty", rows.length ? "" : `No on-demand Linux price for ${esc(s.sku)} in ${esc(s.region)}.${why(rows)}`);
  if (!rows.length) { hide("prices-chart"); return; }
  plot("prices-chart", [{type: "scatter", mode: "lines+markers", line: {shape: "hv"}, name: s.sku,
    x: rows.flatMap((r) => [r.valid_from, r.valid_to ?? new Date().toISOString()]),
    y: rows.flatMap((r) => [r.price_per_accelerator_hour, r.price_per_accelerator_hour])}],
    {height: 320, title: {text: `${s.sku} in ${s.region}, on demand, Linux (evidence: list_price)`, x: 0, font: {size: 13}},
     xaxis: {title: {text: "Valid from (UTC)"}}, yaxis: {title: {text: "USD per accelerator-hour"}, rangemode: "tozero", automargin: true}, showlegend: false});
}

async function freshness() {
  const h = await api("/healthz");
  const items = [["Snapshot", h.snapshot_id ?? "none published yet"], ["Published", when(h.published_at) || "never"]];
  const said = {
    stale: (src) => `stale since ${when(src.stale_since) || "an earlier refresh"}: ${hosts(src.message)}`,
    never_loaded: (src) => `never loaded (last attempt ${when(src.last_attempt)}: ${hosts(src.message)})`,
    disabled: () => "disabled (enabled = false in the sources file)",
    fresh: (src) => `fresh (last success ${when(src.last_success)})`};
  h.sources.forEach((src) => items.push([src.source, (said[src.state] || said.fresh)(src)]));
  items.push(["Validation", `${h.validation.errors} errors; warnings: ${h.validation.warnings.join("; ") || "none"}`
    + (h.validation.no_rows?.length ? `; no rows to check: ${h.validation.no_rows.join(", ")}` : "")]);
  $("freshness").innerHTML = items.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join("")
    + `<dt>Sources</dt><dd>${link("/v1/sources", "/v1/sources")} · ${link("/v1/refreshes", "/v1/refreshes")}</dd>`;
  const lines = h.sources.filter((src) => src.state === "stale" || src.state === "never_loaded").map((src) => src.last_status === "partial"
    ? `<li><strong>${esc(src.source)}</strong> loaded in part (${esc(when(src.last_attempt))}): ${esc(hosts(src.message))}. What loaded is served; the parts named have the data they last had, if any.</li>`
    : src.state === "stale"
    ? `<li><strong>${esc(src.source)}</strong> is stale (${esc(src.last_status)} at ${esc(when(src.last_attempt))}): ${esc(hosts(src.message))}. Its last good data keeps serving.</li>`
    : `<li><strong>${esc(src.source)}</strong> has never loaded (${esc(src.last_status)} at ${esc(when(src.last_attempt))}): ${esc(hosts(src.message))}. Its sections stay empty until it does.</li>`);
  if (!META.rounds.length) {
    const why = h.sources.find((src) => src.source === "mlperf");
    lines.unshift(`<li><strong>No MLPerf results yet</strong>${why ? `: ${esc(hosts(why.message))}` : ""}. Point <code>[mlperf.rounds]</code> in <code>sources.toml</code> (or the file <code>PERFLEDGER_SOURCES</code> names) at a mirror or at local copies of the summary files, then run <code>perfledger refresh</code>.</li>`);
  }
  $("banner").hidden = !lines.length;
  $("banner").innerHTML = lines.length ? `<ul>${lines.join("")}</ul>` : "";
}

// ------------------------------------------------------------------ page

async function section(name, work) {
  try { await work(); } catch (e) {
    const box = $(`${name}-empty`);
    if (box) { box.hidden = false; box.textContent = `Could not load: ${e.message}`; }
    throw e;
  }
}

async function render() {
  const s = state();
  ["model", "round", "scenario", "division", "availability", "basis", "region", "rate", "answer", "sku", "seq"].forEach((k) => { if ($(k).value !== s[k]) $(k).value = s[k]; });
  $("all").checked = s.all === "1";
  const t = targets(s.model);  // a family with two accuracy targets: one at a time, or both
  $("target-label").hidden = t.length < 2;
  const strict = t[t.length - 1];
  $("target").innerHTML = [strict, ...t.filter((v) => v !== strict), "both"].map((v) => `<option value="${v === strict ? "" : v}">${v === "both" ? "both (each system twice)" : `${s.model}-${v}`}</option>`).join("");
  $("target").value = t.includes(s.target) && s.target !== strict || s.target === "both" ? s.target : "";
  $("rate-label").hidden = s.basis !== "assumed";
  $("status").textContent = "Loading…";
  document.body.dataset.ready = "false";
  const results = await Promise.allSettled([
    section("ratios", () => ratios(s)), section("costs", () => costs(s)), section("latency", () => latency(s)),
    section("trends", () => trends(s)), section("frontier", () => frontier(s)),
    section("claims", () => claims(s)), section("prices", () => prices(s)),
    freshness()]);
  const failed = results.filter((r) => r.status === "rejected");
  $("status").textContent = failed.length ? `Could not load: ${failed[0].reason.message}` : "";
  document.body.dataset.ready = "true";
}

async function init() {
  META = await api("/v1/meta");
  [...META.accelerators].sort().forEach((a) => colour(a));
  const skus = (await api("/v1/accelerators")).rows.flatMap((a) => (a.azure_skus || []).map((x) => x.sku)).sort();
  const fill = (select, values, label = (v) => v) => {
    select.innerHTML = values.map((v) => `<option value="${esc(v)}">${esc(label(v))}</option>`).join("");
  };
  fill($("model"), META.models.length ? [...new Set([...META.model_families, ...META.models])].sort() : [DEFAULTS.model]);
  DEFAULTS.round = META.rounds[META.rounds.length - 1] || "";  // the latest round
  fill($("round"), [...META.rounds].reverse().concat(META.rounds.length ? ["all"] : [""]),
       (v) => v === "all" ? "all rounds" : v || "no round loaded");
  fill($("region"), META.regions.length ? META.regions : [DEFAULTS.region]);
  fill($("sku"), skus.length ? skus : [DEFAULTS.sku]);
  // the frontier's lengths: InferenceX's usual three and any the observations were run at
  CHOICES.seq = [...new Set([...CHOICES.seq, ...(META.observation_lengths || [])])];
  fill($("seq"), CHOICES.seq, (v) => v.replace("/", " / "));
  const {s, notes} = checked(state(), skus);
  $("param-note").hidden = !notes.length;
  $("param-note").textContent = notes.length ? `Ignored in the address: ${notes.join("; ")}.` : "";
  if (notes.length) {
    const q = new URLSearchParams(Object.entries(s).filter(([k, v]) => v !== "" && v !== DEFAULTS[k]));
    history.replaceState(null, "", q.toString() ? `?${q}` : location.pathname);
  }
  ["model", "round", "target", "scenario", "division", "availability", "basis", "region", "sku", "accelerator", "seq"].forEach((k) =>
    $(k).addEventListener("change", (e) => setState({[k]: e.target.value})));
  $("rate").addEventListener("change", (e) => { if (e.target.value > 0) setState({rate: e.target.value}); });
  $("answer").addEventListener("change", (e) => { const n = Number(e.target.value); if (Number.isInteger(n) && n >= 1) setState({answer: String(n)}); });
  $("all").addEventListener("change", (e) => setState({all: e.target.checked ? "1" : ""}));
  document.querySelectorAll("table").forEach(sortable);
  await render();
}

window.addEventListener("DOMContentLoaded", () => init().catch((e) => { $("status").textContent = `Could not load: ${e.message}`; document.body.dataset.ready = "true"; }));
