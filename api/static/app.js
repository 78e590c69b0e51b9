// perfledger explorer: a dashboard client built only on the public /v1 API (same origin).
"use strict";

const $ = (id) => document.getElementById(id);
const fmt = (x, d = 2) => x == null ? "" : Number(x).toLocaleString("en-US", {maximumFractionDigits: d, minimumFractionDigits: d});
const whole = (x) => x == null ? "" : Math.round(x).toLocaleString("en-US");
const esc = (s) => String(s ?? "").replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
const link = (href, text) => `<a href="${esc(href)}">${esc(text)}</a>`;
const DEFAULTS = {model: "deepseek-r1", round: "", scenario: "Interactive", basis: "list_price",
                  region: "eastus2", rate: "10", sku: "Standard_ND96isr_H100_v5"};
// Colour-blind-safe palette; bars also carry text labels so greyscale prints stay readable.
const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];

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

async function api(path) {
  const r = await fetch(path, {headers: {Accept: "application/json"}});
  const body = await r.json();
  if (!r.ok) throw new Error(body.error ? body.error.message : `HTTP ${r.status}`);
  return body;
}

async function all(path) {
  let body = await api(path), rows = body.rows;
  while (body.next) {
    const next = new URL(body.next);
    body = await api(next.pathname + next.search);
    rows = rows.concat(body.rows);
  }
  return rows;
}

function fill(select, values, chosen, label = (v) => v) {
  select.innerHTML = values.map((v) => `<option value="${esc(v)}">${esc(label(v))}</option>`).join("");
  if (values.includes(chosen)) select.value = chosen;
}

function chart(id, traces, layout) {
  if (!window.Plotly) { $(id).textContent = "(chart library not loaded)"; return; }
  Plotly.react(id, traces, {margin: {t: 20, r: 10, b: 120, l: 60}, font: {size: 12},
                            legend: {orientation: "h"}, ...layout},
               {displaylogo: false, responsive: true});
}

function byAccelerator(rows) {
  const groups = new Map();
  rows.forEach((r) => {
    const key = r.accelerator_id || r.accelerator_model_name || "mixed / none";
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(r);
  });
  return [...groups.entries()];
}

async function ratios(s) {
  const q = new URLSearchParams({model: s.model, scenario: s.scenario === "Offline" ? "Interactive" : s.scenario,
                                 sort: "-ratio", limit: "1000"});
  if (s.round) q.set("round", s.round);
  const rows = await all(`/v1/ratios?${q}`);
  const body = $("ratios-table").tBodies[0];
  body.innerHTML = rows.length ? rows.map((r) => `<tr>
      <td>${esc(r.system_name)}</td><td>${esc(r.organization)}</td>
      <td>${esc(r.accelerator_id || r.accelerator_model_name)} × ${r.total_accelerators ?? "?"}</td>
      <td>${esc(r.scenario)}${r.flagged ? " (flagged)" : ""}</td>
      <td class="num" data-testid="ratio">${link(`/v1/ratios?model=${encodeURIComponent(r.model_id)}&organization=${encodeURIComponent(r.organization)}&scenario=${r.scenario}`, fmt(r.ratio))}</td>
      <td class="num">${link(`/v1/results/${r.offline_result_id}`, whole(r.offline_result))}</td>
      <td class="num">${link(`/v1/results/${r.other_result_id}`, whole(r.other_result))}</td>
      <td>${esc(r.other_units)}</td></tr>`).join("")
    : `<tr><td colspan="8" class="none">No system has both an Offline and a ${esc(s.scenario)} result for ${esc(s.model)}.</td></tr>`;
  chart("ratios-chart", byAccelerator(rows).map(([acc, rs], i) => ({
    type: "bar", name: acc, x: rs.map((r) => `${r.organization}: ${r.system_name}`.slice(0, 60)),
    y: rs.map((r) => r.ratio), text: rs.map((r) => fmt(r.ratio)), textposition: "outside",
    marker: {color: PALETTE[i % PALETTE.length], pattern: {shape: ["", "/", ".", "x", "-", "+"][i % 6]}},
    hovertext: rs.map((r) => `offline ${whole(r.offline_result)} → ${r.scenario.toLowerCase()} ${whole(r.other_result)} ${r.other_units}`),
    hoverinfo: "text+name"})), {yaxis: {title: "ratio", rangemode: "tozero"}});
}

async function costs(s) {
  const q = new URLSearchParams({model: s.model, scenario: s.scenario, basis: s.basis, limit: "1000",
                                 sort: "cost_per_million_tokens"});
  if (s.round) q.set("round", s.round);
  if (s.basis === "assumed") q.set("rate", s.rate); else q.set("region", s.region);
  $("costs-note").textContent = s.basis === "assumed"
    ? `At an assumed $${s.rate} per accelerator-hour (evidence: assumption).`
    : `At the cheapest current Azure on-demand Linux price per accelerator-hour in ${s.region} (evidence: list_price); systems whose accelerator Azure does not rent there show "no price".`;
  const rows = await all(`/v1/costs?${q}`);
  $("costs-table").tBodies[0].innerHTML = rows.length ? rows.map((r) => `<tr>
      <td>${esc(r.organization)}: ${esc(r.system_name)}</td><td>${esc(r.accelerator_id ?? "—")}</td>
      <td class="num">${r.total_accelerators}</td>
      <td class="num">${link(`/v1/results/${r.result_id}`, whole(r.result))}</td>
      <td class="num">${r.rate_per_accelerator_hour == null ? "" : fmt(r.rate_per_accelerator_hour)}</td>
      <td class="num" data-testid="cost">${r.cost_per_million_tokens == null ? '<span class="none">no price</span>' : fmt(r.cost_per_million_tokens, 3)}</td>
      <td>${esc(r.basis)}</td></tr>`).join("")
    : `<tr><td colspan="7" class="none">No Tokens/s result for ${esc(s.model)} ${esc(s.scenario)}.</td></tr>`;
  const priced = rows.filter((r) => r.cost_per_million_tokens != null);
  chart("costs-chart", byAccelerator(priced).map(([acc, rs], i) => ({
    type: "bar", name: acc, x: rs.map((r) => `${r.organization}: ${r.system_name}`.slice(0, 60)),
    y: rs.map((r) => r.cost_per_million_tokens), text: rs.map((r) => fmt(r.cost_per_million_tokens, 3)),
    textposition: "outside", marker: {color: PALETTE[i % PALETTE.length]}})),
    {yaxis: {title: "USD per million tokens", rangemode: "tozero"}});
}

async function claims(s) {
  const q = new URLSearchParams({limit: "1000", sort: "vendor"});
  if (s.round) q.set("round", s.round);
  const rows = await all(`/v1/claim-checks?${q}`);
  $("claims-table").tBodies[0].innerHTML = rows.map((r) => `<tr>
      <td>${link(`/v1/claims/${r.claim_id}`, `${r.vendor}: ${r.product ?? ""}${r.model ? " · " + r.model : ""}`)}</td>
      <td class="num">${fmt(r.claim_value, r.claim_value < 10 ? 2 : 0)} ${esc(r.unit)}</td>
      <td><span class="badge ${esc(r.evidence)}">${esc(r.evidence)}</span></td>
      <td>${esc(r.claimed_on ?? "")}</td>
      <td class="num">${r.recomputed_value == null ? "" : fmt(r.recomputed_value, 0)}</td>
      <td>${r.closest_result_id ? link(`/v1/results/${r.closest_result_id}`, r.verdict) : esc(r.verdict)}</td></tr>`).join("");
  const speeds = rows.filter((r) => r.unit === "tokens/s");
  chart("claims-chart", [...new Set(speeds.map((r) => r.evidence))].map((ev, i) => {
    const rs = speeds.filter((r) => r.evidence === ev);
    return {type: "scatter", mode: "markers+text", name: ev,
            x: rs.map((r) => r.claimed_on || "undated"), y: rs.map((r) => r.claim_value),
            text: rs.map((r) => `${r.vendor} ${r.model ?? ""}`), textposition: "top center",
            marker: {size: 11, color: PALETTE[i % PALETTE.length], symbol: ["circle", "square", "diamond", "triangle-up"][i % 4]}};
  }), {yaxis: {title: "tokens/s (claimed)", type: "log"}, margin: {t: 20, r: 10, b: 60, l: 60}});
}

async function prices(s) {
  const q = new URLSearchParams({sku: s.sku, region: s.region, offer: "on_demand", os: "linux", limit: "1000",
                                 sort: "valid_from"});
  const rows = await all(`/v1/prices/history?${q}`);
  $("prices-table").tBodies[0].innerHTML = rows.length ? rows.map((r) => `<tr>
      <td>${esc(r.valid_from)}</td><td>${esc(r.valid_to ?? "current")}</td>
      <td class="num">${link(`/v1/sources/${r.source_snapshot_id}`, fmt(r.retail_price))}</td>
      <td class="num">${r.price_per_accelerator_hour == null ? '<span class="none">not mapped</span>' : fmt(r.price_per_accelerator_hour)}</td></tr>`).join("")
    : `<tr><td colspan="4" class="none">No on-demand Linux price for ${esc(s.sku)} in ${esc(s.region)}.</td></tr>`;
  chart("prices-chart", [{type: "scatter", mode: "lines+markers", line: {shape: "hv"}, name: s.sku,
    x: rows.flatMap((r) => [r.valid_from, r.valid_to ?? new Date().toISOString()]),
    y: rows.flatMap((r) => [r.price_per_accelerator_hour, r.price_per_accelerator_hour])}],
    {yaxis: {title: "USD per accelerator-hour", rangemode: "tozero"}, margin: {t: 20, r: 10, b: 60, l: 60}});
}

async function freshness() {
  const h = await api("/healthz");
  const items = [["Snapshot", h.snapshot_id ?? "none published yet"], ["Published", h.published_at ?? ""]];
  h.sources.forEach((src) => items.push([src.source, src.stale
    ? `stale since ${src.stale_since ?? "never refreshed"}: ${src.message}`
    : `fresh (last success ${src.last_success})`]));
  items.push(["Validation", `${h.validation.errors} errors; warnings: ${h.validation.warnings.join("; ") || "none"}`]);
  $("freshness").innerHTML = items.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join("")
    + `<dt>Sources</dt><dd>${link("/v1/sources", "/v1/sources")} · ${link("/v1/refreshes", "/v1/refreshes")}</dd>`;
}

async function render() {
  const s = state();
  ["model", "round", "scenario", "basis", "region", "rate", "sku"].forEach((k) => { if ($(k).value !== s[k]) $(k).value = s[k]; });
  $("rate-label").hidden = s.basis !== "assumed";
  $("region-label").hidden = s.basis === "assumed";
  $("status").textContent = "Loading…";
  document.body.dataset.ready = "false";
  try {
    await Promise.all([ratios(s), costs(s), claims(s), prices(s), freshness()]);
    $("status").textContent = "";
  } catch (e) {
    $("status").textContent = `Could not load: ${e.message}`;
  }
  document.body.dataset.ready = "true";
}

async function init() {
  const meta = await api("/v1/meta");
  const s = state();
  fill($("model"), meta.models, s.model);
  fill($("round"), ["", ...meta.rounds], s.round, (v) => v || "all rounds");
  fill($("region"), meta.regions.length ? meta.regions : ["eastus2"], s.region);
  const skus = (await api("/v1/accelerators")).rows.flatMap((a) => (a.azure_skus || []).map((x) => x.sku)).sort();
  fill($("sku"), skus.length ? skus : [s.sku], s.sku);
  ["model", "round", "scenario", "basis", "region", "sku"].forEach((k) =>
    $(k).addEventListener("change", (e) => setState({[k]: e.target.value})));
  $("rate").addEventListener("change", (e) => { if (e.target.value > 0) setState({rate: e.target.value}); });
  await render();
}

window.addEventListener("DOMContentLoaded", () => init().catch((e) => { $("status").textContent = `Could not load: ${e.message}`; document.body.dataset.ready = "true"; }));
