#include "report/report_html.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

namespace soltune::report {

const std::string& chart_js();  // chart_js.cpp, generated from Debian's libjs-chart.js

namespace {

using nlohmann::json;

// NaN and infinities have no JSON form: null, which the page draws as a gap.
json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json ceilings_json(const Ceilings& c) {
  return {{"mem_bw", num(c.sol_bw())}, {"copy_bw", num(c.mem_bw)}, {"read_bw", num(c.read_bw)},
          {"fp32", num(c.fp32)}, {"tensor_16", num(c.tensor_16)},
          {"tensor_8", num(c.tensor_8)}, {"source", c.source}};
}

json task_json(const TaskView& t) {
  json j{{"gpu", t.gpu}, {"problem", t.problem}, {"variant", t.variant}, {"dtype", t.dtype}, {"shape", t.shape},
         {"id", t.id()}, {"evaluations", t.evaluations}, {"by_status", t.by_status}, {"example_log", t.example_log},
         {"by_proposer", t.by_proposer}, {"wins", t.wins}, {"compile_ms", num(t.compile_ms)},
         {"cache_hits", t.cache_hits}, {"gpu_ms", num(t.gpu_ms)}, {"t_ref_us", num(t.t_ref_us)}, {"t_sol_us", num(t.t_sol_us)},
         {"flops", num(t.flops)}, {"bytes", num(t.bytes)}, {"audited", t.audited_clean}};
  json pts = json::array();
  for (const auto& p : t.points)
    pts.push_back({{"i", p.index}, {"s", p.status}, {"p", p.proposer}, {"c", p.config}, {"t", num(p.time_us)},
                   {"sol", num(p.sol)}, {"r", p.rejected}});
  j["points"] = std::move(pts);
  json phases = json::array();  // [name, ms] in core/measure.hpp's order
  for (const auto& [name, m] : kGpuPhaseFields) phases.push_back({name, num(t.phases.*m)});
  j["phases"] = std::move(phases);
  json best = json::array();
  for (const auto& [i, s] : t.best_sol) best.push_back({i, num(s)});
  j["best_sol"] = std::move(best);
  if (t.best) {
    const auto& b = *t.best;
    j["best"] = {{"time_us", num(b.time_us)}, {"q1_us", num(b.q1_us)}, {"q3_us", num(b.q3_us)},
                 {"sol", num(b.sol_score)}, {"sol_eb", num(b.sol_execbench)}, {"config", b.config_key},
                 {"registers", b.res.registers}, {"occupancy", b.occupancy_blocks}, {"proposer", b.proposer},
                 {"kind", b.time_kind}, {"below_sol", b.below_sol}};
  }
  return j;
}

// The page's own script: tables and charts from the JSON in #data.
constexpr const char* kPageScript = R"js(
const D = JSON.parse(document.getElementById('data').textContent);
const fmt = (v, d = 1) => (v === null || v === undefined) ? '-' : Number(v).toFixed(d);
const esc = s => String(s).replace(/[&<>"]/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]));
// A log axis's label at powers of ten only.
const decade = v => { const e = Math.log10(v); return Math.abs(e - Math.round(e)) < 1e-9 ? String(+v) : ''; };
const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22'];
const pred = D.any_predicted ? ' <span class="pred">(predicted times)</span>' : '';
for (const h of document.querySelectorAll('h2')) h.innerHTML += pred;

// The kernels table: the best of each task, sortable by any column.
const cols = [['GPU', t => t.gpu], ['problem', t => t.problem], ['variant', t => t.variant], ['dtype', t => t.dtype],
  ['shape', t => t.shape], ['time us', t => t.best ? t.best.time_us : null, 1],
  ['q1-q3', t => t.best ? fmt(t.best.q1_us) + '-' + fmt(t.best.q3_us) : '-'],
  ['GB/s', t => t.best && t.bytes ? t.bytes / t.best.time_us / 1e3 : null, 0],
  ['TFLOP/s', t => t.best && t.flops ? t.flops / t.best.time_us / 1e6 : null, 1],
  ['T_ref us', t => t.t_ref_us, 1], ['T_SOL us', t => t.t_sol_us, 1], ['SOL', t => t.best ? t.best.sol : null, 3],
  ['SOL-EB', t => t.best ? t.best.sol_eb : null, 3], ['configuration', t => t.best ? t.best.config : '-'],
  ['regs', t => t.best ? t.best.registers : null, 0], ['blocks/SM', t => t.best ? t.best.occupancy : null, 0],
  ['found by', t => t.best ? t.best.proposer || '-' : '-'], ['audited', t => t.audited ? 'yes' : 'no'],
  ['evals', t => t.evaluations, 0]];
let order = {col: -1, dir: 1};
function kernels() {
  const rows = D.tasks.map((t, i) => [t, i]);
  if (order.col >= 0) {
    const f = cols[order.col][1];
    rows.sort((a, b) => { const x = f(a[0]), y = f(b[0]);
      if (x === y) return 0; if (x === null) return 1; if (y === null) return -1;
      return (x < y ? -1 : 1) * order.dir; });
  }
  let h = '<tr>' + cols.map((c, j) => `<th data-col="${j}">${c[0]}</th>`).join('') + '</tr>';
  for (const [t, i] of rows)
    h += '<tr>' + cols.map((c, j) => { const v = c[1](t);
      const s = (c.length > 2 && typeof v === 'number') ? fmt(v, c[2]) : esc(v === null ? '-' : v);
      return j === 4 ? `<td><a href="#task-${i}">${s}</a></td>` : `<td>${s}</td>`; }).join('') + '</tr>';
  const table = document.getElementById('kernels');
  table.innerHTML = h;
  for (const th of table.querySelectorAll('th')) th.onclick = () => {
    const j = +th.dataset.col; order = {col: j, dir: order.col === j ? -order.dir : 1}; kernels(); };
}
kernels();

// A roofline per GPU: its ceilings, and each task's best kernel, baseline and T_SOL at its intensity.
const charts = [];
for (const [g, gpu] of D.gpus.entries()) {
  const tasks = D.tasks.filter(t => t.gpu === gpu.name && t.flops > 0 && t.bytes > 0);
  if (!tasks.some(t => t.best)) {
    const p = document.createElement('p');
    p.textContent = gpu.name + ': no task with a result has FLOPs and bytes to place (see the notes above).';
    document.getElementById('rooflines').appendChild(p);
    continue;
  }
  const div = document.createElement('div'); div.className = 'chart';
  const canvas = document.createElement('canvas'); canvas.id = 'roofline-' + g; div.appendChild(canvas);
  document.getElementById('rooflines').appendChild(div);
  const pt = (t, us, what) => ({x: t.flops / t.bytes, y: t.flops / us * 1e6, task: t.id + ' ' + what});
  const xs = tasks.map(t => t.flops / t.bytes), lo = Math.min(0.01, ...xs) / 2, hi = Math.max(1000, ...xs) * 2;
  const roofs = [];
  const c = gpu.ceilings;
  // Measured roofs solid, the datasheet's dashed (only where measured ones exist beside them).
  const sheet = gpu.datasheet, measured = c.source !== sheet.source;
  for (const [name, rate, bw, dash] of [['FP32', c.fp32, c.mem_bw], ['tensor 16-bit', c.tensor_16, c.mem_bw],
                                        ['tensor 8-bit', c.tensor_8, c.mem_bw],
                                        ...(measured ? [['datasheet FP32', sheet.fp32, sheet.mem_bw, true],
                                                        ['datasheet tensor 16-bit', sheet.tensor_16, sheet.mem_bw, true],
                                                        ['datasheet tensor 8-bit', sheet.tensor_8, sheet.mem_bw, true]] : [])])
    if (rate > 0 && bw > 0) roofs.push({label: name + ' roof', type: 'line', borderDash: dash ? [6, 4] : [],
      pointRadius: 0, borderWidth: 1, borderColor: dash ? '#aaa' : '#666', data: [{x: lo, y: Math.min(rate, bw * lo)},
      {x: rate / bw, y: rate}, {x: hi, y: rate}]});
  // The bandwidths apart: the copy's (read and write) and the read's, where measured, up to the
  // highest compute roof.
  const top = Math.max(c.fp32 || 0, c.tensor_16 || 0, c.tensor_8 || 0, gpu.datasheet.tensor_16 || 0);
  for (const [name, bw] of [['copy bandwidth', c.copy_bw], ['read bandwidth', c.read_bw]])
    if (bw > 0 && top > 0) roofs.push({label: name, type: 'line', pointRadius: 0, borderWidth: 1, borderColor: '#bbb',
      borderDash: [2, 3], data: [{x: lo, y: bw * lo}, {x: top / bw, y: top}]});
  const ok = tasks.filter(t => t.best);
  charts.push(new Chart(canvas, {type: 'scatter', data: {datasets: [
    {label: 'best kernel', data: ok.map(t => pt(t, t.best.time_us, t.best.config)), backgroundColor: COLORS[0]},
    {label: 'baseline (T_ref)', data: ok.filter(t => t.t_ref_us).map(t => pt(t, t.t_ref_us, 'T_ref')), backgroundColor: COLORS[1]},
    {label: 'T_SOL', data: ok.filter(t => t.t_sol_us).map(t => pt(t, t.t_sol_us, 'T_SOL')), backgroundColor: COLORS[2], pointStyle: 'triangle'},
    ...roofs]},
    options: {animation: false, plugins: {title: {display: true, text: gpu.name + (gpu.predicted ? ' (model: predicted times)' : '')},
      tooltip: {callbacks: {label: ctx => (ctx.raw.task || ctx.dataset.label) + ': ' + fmt(ctx.raw.y / 1e12, 2) + ' TFLOP/s'}}},
      scales: {x: {type: 'logarithmic', title: {display: true, text: 'FLOP per byte'}, ticks: {callback: decade}},
               y: {type: 'logarithmic', title: {display: true, text: 'FLOP/s'}}}}}));
}

// Time and SOL against size, for each problem and dtype measured at several shapes on a GPU: one
// line per variant (its best at each shape). Size is the task's FLOPs, or its bytes where the
// problem counts no FLOPs.
const groups = {};
for (const t of D.tasks) if (t.best && (t.flops > 0 || t.bytes > 0))
  (groups[t.gpu + ' ' + t.problem + ' ' + t.dtype] ||= []).push(t);
for (const [name, ts] of Object.entries(groups)) {
  if (new Set(ts.map(t => t.shape)).size < 2) continue;
  const byFlops = ts.every(t => t.flops > 0);
  const variants = [...new Set(ts.map(t => t.variant))];
  for (const [what, y, log] of [['time us', t => t.best.time_us, true], ['SOL', t => t.best.sol, false]]) {
    const div = document.createElement('div'); div.className = 'chart';
    const canvas = document.createElement('canvas'); div.appendChild(canvas);
    document.getElementById('sizes').appendChild(div);
    charts.push(new Chart(canvas, {type: 'scatter', data: {datasets: variants.map((v, k) => ({label: v, showLine: true,
      borderColor: COLORS[k % COLORS.length], backgroundColor: COLORS[k % COLORS.length],
      data: ts.filter(t => t.variant === v).map(t => ({x: byFlops ? t.flops : t.bytes, y: y(t), shape: t.shape}))
        .filter(p => p.y !== null).sort((a, b) => a.x - b.x)}))},
      options: {animation: false, plugins: {title: {display: true, text: name + ': ' + what},
        tooltip: {callbacks: {label: ctx => ctx.dataset.label + ' ' + ctx.raw.shape + ': ' + fmt(ctx.raw.y, 3)}}},
        scales: {x: {type: 'logarithmic', title: {display: true, text: byFlops ? 'FLOPs' : 'bytes'}, ticks: {callback: decade}},
                 y: {type: log ? 'logarithmic' : 'linear', title: {display: true, text: what}}}}}));
  }
}
if (!document.getElementById('sizes').children.length)
  document.getElementById('sizes').innerHTML = '<p>No problem and dtype was measured at two shapes or more.</p>';

// The knobs of a configuration key, "BM=128,BN=64" -> {BM: 128, BN: 64}.
const knobs = key => Object.fromEntries((key || '').split(',').filter(p => p.includes('=')).map(p => {
  const [k, v] = p.split('='); return [k, Number(v)]; }));

// Each task: its search's progress (SOL of every evaluation by what proposed it, failures at the
// bottom, the best so far as a line) and what went wrong.
for (const [i, t] of D.tasks.entries()) {
  const sec = document.createElement('section'); sec.id = 'task-' + i;
  let h = `<h3>${esc(t.id)} <small>${esc(t.gpu)}</small>${pred}</h3>`;
  h += `<p>${t.evaluations} evaluations; proposed by ` + Object.entries(t.by_proposer).map(([p, n]) =>
    `${esc(p)} ${n}` + (t.wins[p] ? ` (${t.wins[p]} raised the best)` : '')).join(', ') +
    `; compiling took ${fmt(t.compile_ms / 1e3, 1)} s, ${t.cache_hits} answered by the compile cache` +
    (t.gpu_ms > 0 ? `; on the GPU ${fmt(t.gpu_ms / 1e3, 1)} s: ` + t.phases.filter(([, v]) => v > 0)
      .map(([k, v]) => `${esc(k)} ${fmt(v / 1e3, 2)} s`).join(', ') : '') + '.</p>';
  h += '<div class="chart"><canvas id="progress-' + i + '"></canvas></div>';
  const bad = Object.entries(t.by_status).filter(([s]) => s !== 'ok');
  h += bad.length ? '<table class="small"><tr><th>status</th><th>evaluations</th><th>an example</th></tr>' +
    bad.map(([s, n]) => `<tr><td>${esc(s)}</td><td>${n}</td><td><details><summary>log</summary><pre>${esc(t.example_log[s] || '')}</pre></details></td></tr>`).join('') + '</table>'
    : '<p>Nothing failed.</p>';
  sec.innerHTML = h;
  document.getElementById('tasks').appendChild(sec);
  const proposers = [...new Set(t.points.map(p => p.p || 'unrecorded'))];
  const okSols = t.points.filter(p => p.sol !== null).map(p => p.sol);
  const floor = okSols.length ? Math.min(...okSols) - 0.1 : 0;
  const sets = proposers.map((p, k) => ({label: p, backgroundColor: COLORS[k % COLORS.length],
    data: t.points.filter(q => (q.p || 'unrecorded') === p && q.sol !== null && !q.r).map(q => ({x: q.i, y: q.sol}))}));
  // The validator's rejections: failures at the bottom, times under T_SOL at their SOL (never a win).
  sets.push({label: 'rejected by the validator (why in the tooltip)', backgroundColor: '#d62728', pointStyle: 'crossRot',
    pointRadius: 5, data: t.points.filter(q => q.r).map(q => ({x: q.i, y: q.sol === null ? floor : q.sol,
      s: q.s === 'ok' ? 'time under T_SOL' : q.s}))});
  // Each proposer's own best so far, a thin line in its colour.
  for (const [k, p] of proposers.entries()) {
    let best = -Infinity;
    const line = [];
    for (const q of t.points) if ((q.p || 'unrecorded') === p && q.sol !== null && !q.r && q.sol > best) {
      best = q.sol; line.push({x: q.i, y: best}); }
    if (line.length) sets.push({label: p + ': its best so far', type: 'line', stepped: true, pointRadius: 0, borderWidth: 1,
      borderColor: COLORS[k % COLORS.length], data: line.concat([{x: t.evaluations, y: best}])});
  }
  sets.push({label: 'best so far', type: 'line', stepped: true, pointRadius: 0, borderColor: '#000', borderWidth: 1.5,
    data: t.best_sol.map(([x, y]) => ({x, y})).concat(t.best_sol.length ? [{x: t.evaluations, y: t.best_sol[t.best_sol.length - 1][1]}] : [])});
  charts.push(new Chart(document.getElementById('progress-' + i), {type: 'scatter', data: {datasets: sets},
    options: {animation: false, plugins: {tooltip: {callbacks: {label: ctx => ctx.raw.s ? 'evaluation ' + ctx.raw.x + ': ' + ctx.raw.s
      : ctx.dataset.label + ', evaluation ' + ctx.raw.x + ': SOL ' + fmt(ctx.raw.y, 3)}}},
      scales: {x: {title: {display: true, text: 'evaluation'}}, y: {title: {display: true, text: 'SOL score'}}}}}));
  // The landscape seen so far: each measured configuration's time against the knob chosen.
  const ok = t.points.filter(q => q.t !== null && q.c && !q.r);
  const names = ok.length ? Object.keys(knobs(ok[0].c)) : [];
  if (!names.length) continue;
  const pick = document.createElement('select');
  pick.innerHTML = names.map(n => `<option>${esc(n)}</option>`).join('');
  const label = document.createElement('p'); label.append('Time against the knob ', pick, ' (each measured configuration):');
  const div = document.createElement('div'); div.className = 'chart';
  const canvas = document.createElement('canvas'); div.appendChild(canvas);
  sec.append(label, div);
  const landscape = knob => ok.map(q => ({x: knobs(q.c)[knob], y: q.t, c: q.c}));
  const chart = new Chart(canvas, {type: 'scatter', data: {datasets: [{label: 'time us', backgroundColor: COLORS[3],
    data: landscape(names[0])}]}, options: {animation: false, plugins: {legend: {display: false},
      tooltip: {callbacks: {label: ctx => ctx.raw.c + ': ' + fmt(ctx.raw.y, 2) + ' us'}}},
      scales: {x: {title: {display: true, text: 'knob value'}}, y: {type: 'logarithmic', title: {display: true, text: 'time us'}}}}});
  pick.onchange = () => { chart.data.datasets[0].data = landscape(pick.value); chart.update(); };
  charts.push(chart);
}
// Once drawn: how many charts put marks on their canvas (a test and a reader can see it on <body>).
requestAnimationFrame(() => {
  let drawn = 0;
  for (const c of charts) {
    const px = c.canvas.getContext('2d').getImageData(0, 0, c.canvas.width, c.canvas.height).data;
    let opaque = 0;
    for (let k = 3; k < px.length && opaque <= 200; k += 4) if (px[k]) ++opaque;
    if (opaque > 200 && c.data.datasets.some(d => d.data.length)) ++drawn;
  }
  document.body.dataset.drawn = drawn + ' of ' + charts.length;
  document.body.dataset.ready = 'yes';
});
)js";

constexpr const char* kStyle = R"css(
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; white-space: nowrap; }
th { background: #f2f2f2; cursor: pointer; }
td:nth-child(-n+5) { text-align: left; }
.chart { width: 900px; max-width: 100%; height: 380px; margin: 0.5em 0 1.5em; }
.pred, .banner { color: #b00; }
.banner { border: 1px solid #b00; padding: 0.5em; }
pre { white-space: pre-wrap; max-width: 900px; text-align: left; }
section { border-top: 1px solid #ddd; margin-top: 1em; }
)css";

std::string escape_html(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string report_json(const ReportData& d) {
  json j{{"kb", d.kb_path}, {"any_predicted", d.any_predicted}, {"notes", d.notes}};
  j["gpus"] = json::array();
  for (const auto& g : d.gpus)
    j["gpus"].push_back({{"name", g.name}, {"predicted", g.predicted}, {"ceilings", ceilings_json(g.ceilings)},
                         {"datasheet", ceilings_json(g.datasheet)}});
  j["tasks"] = json::array();
  for (const auto& t : d.tasks) j["tasks"].push_back(task_json(t));
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string render_html(const ReportData& d, const std::string& generated_at) {
  std::string data = report_json(d);
  // Inside <script>, "</" could end the element early: JSON reads "<\/" as the same text.
  for (size_t at = data.find("</"); at != std::string::npos; at = data.find("</", at + 3)) data.replace(at, 2, "<\\/");
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>soltune report</title>\n"
                  // Any script error, kept where a test (or a curious reader) finds it.
                  "<script>window.onerror = m => { document.documentElement.dataset.error = String(m); };\n"
                  "const consoleError = console.error; console.error = (...a) => { "
                  "document.documentElement.dataset.error = a.join(' '); consoleError(...a); };</script>\n<style>";
  h += kStyle;
  h += "</style>\n</head><body>\n<h1>soltune report</h1>\n<p>" + escape_html(d.kb_path) + ", " + escape_html(generated_at) +
       ": " + std::to_string(d.tasks.size()) + " task(s) on " + std::to_string(d.gpus.size()) + " GPU(s).</p>\n";
  if (d.any_predicted)
    h += "<p class=\"banner\">Some or all times here are the model backend's predictions (no GPU measured them): "
         "tune with --backend cuda on a GPU before trusting them.</p>\n";
  if (!d.notes.empty()) {
    h += "<ul>";
    for (const auto& n : d.notes) h += "<li>" + escape_html(n) + "</li>";
    h += "</ul>\n";
  }
  h += "<h2>Kernels</h2>\n<p>The best of each task (click a heading to sort, a shape for its search).</p>\n"
       "<table id=\"kernels\"></table>\n<h2>Rooflines</h2>\n<p>Each task's best kernel, its baseline (T_ref) and its "
       "speed of light (T_SOL) at the task's FLOPs per byte, under the GPU's ceilings (measured where measured; the "
       "datasheet's dashed).</p>\n<div id=\"rooflines\"></div>\n<h2>Sizes</h2>\n<p>Each variant's best time and SOL "
       "against the task's size, where a problem and dtype were measured at several shapes.</p>\n<div id=\"sizes\"></div>\n"
       "<h2>Tasks</h2>\n<div id=\"tasks\"></div>\n";
  h += "<script type=\"application/json\" id=\"data\">" + data + "</script>\n<script>" + chart_js() + "</script>\n<script>";
  h += kPageScript;
  h += "</script>\n</body></html>\n";
  return h;
}

}  // namespace soltune::report
