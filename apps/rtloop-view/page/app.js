// SPDX-License-Identifier: MIT
// rtloop-view's page: polls /api/data 20 times a second (and /api/hists),
// draws the signals with Chart.js, and fills the tables. Nothing here
// talks to anything but the server it came from.
"use strict";

const POLL_MS = 50;      // data: 20 updates a second
const HISTS_MS = 100;    // histograms: 10 a second (the loop mirrors them in slices)
const MAX_CHARTS = 12;   // shown by default: the first signals of up to 8 values
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#17becf",
                "#8c564b", "#e377c2"];
const STATE_SIGNALS = new Set(["robot_mode", "safety_mode", "runtime_state",
                               "robot_state", "motion_mode", "cmd_mode"]);
// Loss and failure counters: red when not zero.
const LOSS = /skip|drop|lost|miss|overrun|malformed|stale|reject|watchdog|error|fail|timeout|bad|nonfinite|overflow|full|silent|refused|unconfirmed|wrong|unexpected/;

const view = {
  info: null,          // /api/info of this generation
  generation: -1,
  next: -1,            // the next history record to ask for (-1: the window)
  charts: new Map(),   // signal index -> {chart, sets, latest}
  shown: new Set(),    // signal indexes drawn
  paused: false,
  updates: 0,
  updateTimes: [],     // when the last 41 updates came: the page's own rate
  samples: [],         // [{t, counters}] for the rates
  histChart: null,
  hists: null,
  lastT: NaN,
};
window.rtlView = view; // for tests and the console

const $ = (sel) => document.querySelector(sel);

function el(tag, attrs = {}, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function fmt(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return "–";
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(3);
  return Number(v.toPrecision(6)).toString();
}

// A rate: whole numbers from 100 up, one decimal below.
function fmtRate(v) {
  if (!Number.isFinite(v)) return "–";
  return Math.abs(v) >= 100 ? Math.round(v).toString() : v.toFixed(1);
}

function us(ns) { return (ns / 1000).toFixed(ns < 10000 ? 2 : 1); }

async function getJSON(path) {
  const r = await fetch(path, { cache: "no-store" });
  if (!r.ok) throw new Error(path + ": HTTP " + r.status);
  return r.json();
}

// ---- layout of a generation ----------------------------------------------------------

function windowS() { return Number($("#window").value); }

function buildSignals(info) {
  for (const c of view.charts.values()) c.chart.destroy();
  view.charts.clear();
  $("#signals").replaceChildren();
  const list = $("#picker-list");
  list.replaceChildren();
  view.shown.clear();
  info.signals.forEach((s, i) => {
    if (s.count <= 8 && !STATE_SIGNALS.has(s.name) && view.shown.size < MAX_CHARTS)
      view.shown.add(i);
    const id = "pick-" + i;
    const box = el("input", { type: "checkbox", id });
    box.checked = view.shown.has(i);
    box.addEventListener("change", () => {
      if (box.checked) view.shown.add(i); else view.shown.delete(i);
      layoutCharts();
      view.next = -1; view.refill = true;
    });
    const lab = el("label", { for: id }, s.name + (s.count > 1 ? "[" + s.count + "]" : ""));
    lab.prepend(box);
    list.append(lab);
  });
  layoutCharts();
}

function layoutCharts() {
  const info = view.info;
  for (const [i, c] of view.charts) {
    if (!view.shown.has(i)) { c.chart.destroy(); c.box.remove(); view.charts.delete(i); }
  }
  for (const i of [...view.shown].sort((a, b) => a - b)) {
    if (view.charts.has(i)) continue;
    const s = info.signals[i];
    const box = el("section", { class: "signal", "data-signal": s.name });
    const h = el("h3");
    h.append(el("span", {}, s.name), el("span", { class: "unit" }, s.unit));
    const latest = el("div", { class: "latest" });
    const wrap = el("div", { class: "chart" });
    const canvas = el("canvas");
    wrap.append(canvas);
    box.append(h, wrap, latest);
    $("#signals").append(box);
    const sets = [];
    for (let k = 0; k < s.count; k++)
      sets.push({ label: s.count > 1 ? s.name + "[" + k + "]" : s.name, data: [],
                  borderColor: COLORS[k % COLORS.length], borderWidth: 1.2,
                  pointRadius: 0, spanGaps: false });
    const chart = new Chart(canvas, {
      type: "line",
      data: { datasets: sets },
      options: {
        animation: false, parsing: false, normalized: true, responsive: true,
        maintainAspectRatio: false, events: [],
        scales: {
          x: { type: "linear", ticks: { maxTicksLimit: 6, callback: (v) => v.toFixed(1) + " s" } },
          y: { ticks: { maxTicksLimit: 5 } },
        },
        plugins: { legend: { display: s.count > 1, labels: { boxWidth: 10, font: { size: 10 } } },
                   tooltip: { enabled: false } },
      },
    });
    const c = { chart, sets, latest, box, visible: true };
    view.charts.set(i, c);
    // A chart scrolled out of sight keeps its data but is not redrawn
    // (the redraw is most of an update's cost).
    new IntersectionObserver((e) => {
      c.visible = e[e.length - 1].isIntersecting;
      if (c.visible) c.chart.update("none");
    }).observe(box);
  }
}

function buildTables(info) {
  const tb = $("#counters tbody");
  tb.replaceChildren();
  for (const name of info.counters) {
    const tr = el("tr", { "data-counter": name });
    tr.append(el("td", {}, name), el("td", { class: "value" }, "0"), el("td", { class: "rate" }, "–"));
    tb.append(tr);
  }
  const hb = $("#hists tbody");
  hb.replaceChildren();
  const sel = $("#hist-select");
  const was = sel.value;
  sel.replaceChildren();
  for (const name of info.hists) {
    const tr = el("tr", { "data-hist": name });
    tr.append(el("td", {}, name));
    for (const c of ["count", "p50", "p90", "p99", "p999", "max", "overflow"])
      tr.append(el("td", { class: c }, "–"));
    hb.append(tr);
    sel.append(el("option", { value: name }, name));
  }
  if (info.hists.includes(was)) sel.value = was;
  $("#robot tbody").replaceChildren();
  view.samples = [];
}

async function loadInfo() {
  const info = await getJSON("/api/info");
  view.info = info;
  view.generation = info.generation;
  view.next = -1;
  $("#name").textContent = info.name;
  document.title = "rtloop-view: " + info.name;
  $("#label").textContent = info.label;
  $("#pid").textContent = info.pid || "-";
  $("#generation").textContent = info.generation;
  buildSignals(info);
  buildTables(info);
}

// ---- updates ---------------------------------------------------------------------------

function showError(msg) {
  const e = $("#error");
  e.hidden = !msg;
  e.textContent = msg || "";
}

function applyData(d) {
  const t0 = performance.now();
  applyData1(d);
  // The page's own cost per update (an average), for the curious.
  const ms = performance.now() - t0;
  view.applyMs = view.applyMs === undefined ? ms : 0.9 * view.applyMs + 0.1 * ms;
}

function applyData1(d) {
  const st = $("#state");
  st.textContent = d.state;
  st.dataset.state = d.state;
  $("#records").textContent = d.records;
  $("#missed").textContent = d.missed;
  view.updates++;
  $("#updates").textContent = view.updates;
  view.updateTimes.push(performance.now());
  while (view.updateTimes.length > 41) view.updateTimes.shift();
  const ut = view.updateTimes;
  if (ut.length > 10)
    $("#update-rate").textContent = ((ut.length - 1) * 1000 / (ut[ut.length - 1] - ut[0])).toFixed(1);
  view.next = d.next;
  const info = view.info;

  // The signals: append, then cut what left the window.
  if (!view.paused && d.t.length) {
    const t = d.t;
    const lastT = t[t.length - 1];
    for (const [i, c] of view.charts) {
      const col = d.values[i];
      const n = info.signals[i].count;
      for (let k = 0; k < n; k++) {
        const ys = n > 1 ? col[k] : col;
        const data = c.sets[k].data;
        if (view.refill) data.length = 0;
        for (let j = 0; j < t.length; j++) data.push({ x: t[j], y: ys[j] === null ? NaN : ys[j] });
        const from = lastT - windowS();
        let cut = 0;
        while (cut < data.length && data[cut].x < from) cut++;
        if (cut) data.splice(0, cut);
      }
      c.chart.options.scales.x.min = lastT - windowS();
      c.chart.options.scales.x.max = lastT;
      if (c.visible) c.chart.update("none");
    }
    view.refill = false;
    view.lastT = lastT;
  }

  // The newest values under each chart, and the robot's state.
  if (d.last) {
    for (const [i, c] of view.charts) {
      const s = info.signals[i];
      const v = d.last.values.slice(s.first, s.first + s.count);
      c.latest.textContent = v.map(fmt).join("  ");
    }
    const rb = $("#robot tbody");
    for (const r of d.last.robot) {
      let tr = rb.querySelector(`tr[data-robot="${r.signal}"]`);
      if (!tr) {
        tr = el("tr", { "data-robot": r.signal });
        tr.append(el("td", {}, r.signal), el("td", { class: "text" }), el("td", { class: "value" }));
        rb.append(tr);
      }
      tr.querySelector(".text").textContent = r.text === null ? "–" : r.text;
      tr.querySelector(".value").textContent = r.value === null ? "–" : r.value;
      tr.classList.toggle("bad", /STOP|FAULT|VIOLATION|EMERGENCY|RECOVERY|SAFE_OFF|ERROR/.test(r.text || ""));
    }
    $("#robot-none").hidden = d.last.robot.length > 0;
  }

  // Counters and their rates over the last second or so.
  const now = performance.now() / 1000;
  view.samples.push({ t: now, c: d.counters });
  while (view.samples.length > 2 && now - view.samples[1].t > 1.0) view.samples.shift();
  const old = view.samples[0];
  const dt = now - old.t;
  const rows = $("#counters tbody").children;
  for (let i = 0; i < d.counters.length && i < rows.length; i++) {
    const v = d.counters[i];
    rows[i].children[1].textContent = v;
    rows[i].children[2].textContent = dt >= 0.25 ? fmtRate((v - old.c[i]) / dt) : "–";
    const name = info.counters[i];
    rows[i].classList.toggle("loss", v > 0 && LOSS.test(name));
    rows[i].classList.toggle("zero", v === 0);
  }
  const fr = info.counters.indexOf("loop.frames");
  if (fr >= 0 && dt >= 0.25)
    $("#rate").textContent = fmtRate((d.counters[fr] - old.c[fr]) / dt);
}

function applyHists(h) {
  view.hists = h;
  const rows = $("#hists tbody");
  for (const x of h.hists) {
    const tr = rows.querySelector(`tr[data-hist="${x.name}"]`);
    if (!tr) continue;
    tr.querySelector(".count").textContent = x.count;
    tr.querySelector(".p50").textContent = x.count ? us(x.p50_ns) : "–";
    tr.querySelector(".p90").textContent = x.count ? us(x.p90_ns) : "–";
    tr.querySelector(".p99").textContent = x.count ? us(x.p99_ns) : "–";
    tr.querySelector(".p999").textContent = x.count ? us(x.p999_ns) : "–";
    tr.querySelector(".max").textContent = x.count ? us(x.max_ns) : "–";
    tr.querySelector(".overflow").textContent = x.overflow;
  }
  drawHist();
}

// The chosen histogram: counts per log-spaced bin, on a log scale.
function drawHist() {
  const h = view.hists;
  if (!h) return;
  const x = h.hists.find((e) => e.name === $("#hist-select").value) || h.hists[0];
  if (!x) return;
  const per = h.bins_per_octave;
  const labels = [], counts = [];
  if (x.bins.length) {
    const lo = x.bins[0][0], hi = x.bins[x.bins.length - 1][0];
    const m = new Map(x.bins);
    for (let b = lo; b <= hi; b++) {
      labels.push(us(Math.pow(2, b / per)));
      counts.push(m.get(b) || 0);
    }
  }
  if (!view.histChart) {
    view.histChart = new Chart($("#hist-chart"), {
      type: "bar",
      data: { labels, datasets: [{ label: "frames", data: counts, backgroundColor: "#1f77b4" }] },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, events: [],
        scales: {
          x: { title: { display: true, text: "µs (log-spaced bins)" }, ticks: { maxTicksLimit: 12 } },
          y: { type: "logarithmic", title: { display: true, text: "count" } },
        },
        plugins: { legend: { display: false }, tooltip: { enabled: false } },
      },
    });
  } else {
    view.histChart.data.labels = labels;
    view.histChart.data.datasets[0].data = counts;
    view.histChart.update("none");
  }
}

// ---- polling ---------------------------------------------------------------------------

// Each poll is due POLL_MS after the last one was due, not after it
// finished: a slow redraw does not slow the rate (a late one starts at once).
let dataDue = 0;
let histsDue = 0;

function again(fn, due) {
  setTimeout(fn, Math.max(0, due - performance.now()));
}

async function pollData() {
  dataDue = Math.max(dataDue + POLL_MS, performance.now() - POLL_MS);
  try {
    if (!view.info) await loadInfo();
    const q = `/api/data?gen=${view.generation}&since=${view.next}&window=${windowS()}`;
    const d = await getJSON(q);
    if (d.generation !== view.generation) {
      await loadInfo(); // a new producer: start over
    } else {
      applyData(d);
      if (d.state === "waiting") {
        const info = await getJSON("/api/info");
        showError(info.error ? "waiting for the loop: " + info.error : "");
        if (info.generation !== view.generation) await loadInfo();
      } else {
        showError("");
      }
    }
  } catch (e) {
    showError("rtloop-view does not answer: " + e.message);
  }
  again(pollData, dataDue);
}

async function pollHists() {
  histsDue = Math.max(histsDue + HISTS_MS, performance.now() - HISTS_MS);
  try {
    if (view.info) {
      const h = await getJSON("/api/hists");
      if (h.generation === view.generation) applyHists(h);
    }
  } catch (e) {
    // pollData reports a server that does not answer.
  }
  again(pollHists, histsDue);
}

$("#pause").addEventListener("click", () => {
  view.paused = !view.paused;
  $("#pause").textContent = view.paused ? "resume" : "pause";
  if (!view.paused) view.refill = true, view.next = -1;
});
$("#window").addEventListener("change", () => { view.next = -1; view.refill = true; });
$("#hist-select").addEventListener("change", drawHist);
pollData();
pollHists();
