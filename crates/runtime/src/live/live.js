// The coordinator's live view: polls GET /state with the coordinator's token
// in an Authorization header and draws it. No framework, no build step.
//
// The token comes once, either in the address's fragment (/#token=...),
// which a browser never sends to a server (so it is in no request line, no
// server log and no Referer) and which this script removes from the address
// bar at once, or from the form. It is kept in sessionStorage (this tab
// only) and sent only as `Authorization: Bearer ...` to this origin.
// Everything drawn is set as text (textContent), never parsed as HTML.
"use strict";

(() => {
  const KEY = "coflowkit-token";
  const POLL_MS = 1000;
  const MAX_IDLE_LINKS = 32;
  // Tasks drawn at most (the highest priority ones): a page of thousands of
  // rows redrawn every second would be neither readable nor quick.
  const MAX_TASKS = 100;
  let timer = null;
  // The previous snapshot's clock and bytes per flow ("host:flow_id"), for
  // the measured rates.
  let prev = null;
  let measured = new Map();

  const $ = (id) => document.getElementById(id);

  function token() {
    return sessionStorage.getItem(KEY);
  }

  function takeFragmentToken() {
    const h = location.hash;
    if (!h.startsWith("#token=")) return;
    const t = decodeURIComponent(h.slice("#token=".length));
    // Out of the address bar (and so out of history and bookmarks) at once.
    history.replaceState(null, "", location.pathname + location.search);
    if (t) sessionStorage.setItem(KEY, t);
  }

  // Numbers as people read them (SI prefixes, three significant digits).
  function si(x, unit) {
    if (x === null || x === undefined || !isFinite(x)) return "–";
    const steps = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
    for (const [f, p] of steps) {
      if (Math.abs(x) >= f) return (x / f).toPrecision(3) + " " + p + unit;
    }
    return (Number.isInteger(x) ? String(x) : x.toPrecision(3)) + " " + unit;
  }
  const bytes = (n) => si(n, "B");
  const rate = (bps) => si(bps, "bit/s");
  function duration(ns) {
    if (ns >= 1e9) return (ns / 1e9).toPrecision(3) + " s";
    if (ns >= 1e6) return (ns / 1e6).toPrecision(3) + " ms";
    return (ns / 1e3).toPrecision(3) + " µs";
  }

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined) continue;
      if (k === "class") e.className = v;
      else e.setAttribute(k, String(v));
    }
    for (const c of children) {
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  function bar(fraction, cls) {
    const f = Math.max(0, Math.min(1, fraction));
    const fill = el("div", { class: "fill " + (cls || "") });
    fill.style.width = (100 * f).toFixed(1) + "%";
    return el("div", { class: "bar", title: (100 * fraction).toFixed(1) + "%" }, fill);
  }

  function fill(tbody, rows) {
    tbody.replaceChildren(...rows);
  }

  function card(key, label, value) {
    return el("div", { class: "card", "data-key": key }, el("div", { class: "label" }, label),
      el("div", { class: "value" }, value));
  }

  function flowState(f) {
    if (f.finished) return "finished";
    if (f.rate_bps === null) return "unscheduled";
    return f.paused ? "paused" : "sending";
  }

  function drawTasks(s) {
    const byCoflow = new Map();
    for (const f of s.flows) {
      if (!byCoflow.has(f.coflow)) byCoflow.set(f.coflow, []);
      byCoflow.get(f.coflow).push(f);
    }
    // Highest priority first: by queue (none last), then id.
    const coflows = [...s.coflows].sort((a, b) =>
      (a.queue ?? Infinity) - (b.queue ?? Infinity) || a.id - b.id);
    const rows = [];
    for (const c of coflows.slice(0, MAX_TASKS)) {
      const flows = (byCoflow.get(c.id) || []).sort((a, b) => a.host - b.host || a.flow_id - b.flow_id);
      const known = flows.every((f) => f.size !== null) && flows.length > 0;
      const sent = flows.reduce((a, f) => a + f.bytes, 0);
      const size = known ? flows.reduce((a, f) => a + f.size, 0) : null;
      const sched = flows.reduce((a, f) => a + (f.rate_bps || 0), 0);
      const meas = flows.reduce((a, f) => a + (measured.get(f.host + ":" + f.flow_id) || 0), 0);
      const name = "coflow " + c.id + (c.parents.length ? " (after " + c.parents.join(", ") + ")" : "");
      rows.push(el("tr", {
        class: "coflow", "data-coflow": c.id, "data-queue": c.queue, "data-open": c.open_flows,
        "data-finished": c.finished_flows, "data-bytes": c.bytes,
      },
      el("td", {}, name),
      el("td", {}, c.queue === null ? "–" : "queue " + c.queue),
      el("td", {}, c.open_flows + " open, " + c.finished_flows + " done"),
      el("td", {}, bytes(c.bytes)),
      el("td", {}, size ? bar(sent / size) : ""),
      el("td", {}, rate(sched)),
      el("td", {}, prev ? rate(meas) : "–"),
      el("td", {}, c.unregistered ? "unregistered" : "registered")));
      for (const f of flows) {
        const key = f.host + ":" + f.flow_id;
        const st = flowState(f);
        rows.push(el("tr", {
          class: "flow " + st, "data-key": key, "data-coflow": f.coflow, "data-host": f.host,
          "data-dst": f.dst, "data-bytes": f.bytes, "data-size": f.size, "data-rate": f.rate_bps,
          "data-class": f.class, "data-state": st,
        },
        el("td", { class: "indent" }, "host " + f.host + " → host " + f.dst + " (flow " + f.flow_id + ")"),
        el("td", {}, f.class === null ? "–" : "class " + f.class),
        el("td", {}, ""),
        el("td", {}, bytes(f.bytes) + " / " + (f.size === null ? "?" : bytes(f.size))),
        el("td", {}, f.size === null ? "" : bar(f.bytes / f.size)),
        el("td", {}, rate(f.rate_bps)),
        el("td", {}, measured.has(key) ? rate(measured.get(key)) : "–"),
        el("td", {}, st)));
      }
    }
    if (coflows.length > MAX_TASKS) {
      rows.push(el("tr", { class: "muted" }, el("td", { colspan: 8 },
        (coflows.length - MAX_TASKS) + " more tasks not shown (all are in /state)")));
    }
    fill($("tasks").tBodies[0], rows);
    $("tasks-empty").hidden = rows.length > 0;
  }

  function drawLinks(s) {
    let links = s.links;
    let hidden = 0;
    if (links.length > MAX_IDLE_LINKS) {
      const busy = links.filter((l) => l.n_flows > 0);
      hidden = links.length - busy.length;
      links = busy;
    }
    const rows = links.map((l) => el("tr", {
      class: "link", "data-name": l.name, "data-capacity": l.capacity_bps,
      "data-rate": l.rate_bps, "data-flows": l.n_flows,
    },
    el("td", {}, l.name), el("td", {}, rate(l.capacity_bps)), el("td", {}, rate(l.rate_bps)),
    el("td", {}, bar(l.rate_bps / l.capacity_bps, l.rate_bps > l.capacity_bps * 1.001 ? "over" : "")),
    el("td", {}, l.n_flows)));
    if (hidden > 0) {
      rows.push(el("tr", { class: "muted" }, el("td", { colspan: 5 }, hidden + " idle links not shown")));
    }
    fill($("links").tBodies[0], rows);
  }

  function drawHosts(s) {
    fill($("hosts").tBodies[0], s.agents.map((a) => el("tr", {
      class: "host", "data-host": a.host, "data-syncs": a.syncs, "data-flows": a.scheduled_flows,
      "data-rate": a.scheduled_rate_bps,
    },
    el("td", {}, "host " + a.host), el("td", {}, a.syncs),
    el("td", { class: a.last_sync_ago_s === null || a.last_sync_ago_s > 2 ? "warn" : "" },
      a.last_sync_ago_s === null ? "never" : duration(a.last_sync_ago_s * 1e9) + " ago"),
    el("td", {}, a.scheduled_flows), el("td", {}, rate(a.scheduled_rate_bps)))));
  }

  function drawCompletions(s) {
    const rows = s.recent_completions.map((c) => el("tr", {
      class: "completion", "data-coflow": c.id, "data-flows": c.n_flows, "data-bytes": c.bytes,
      "data-cct-ns": c.cct_ns,
    },
    el("td", {}, "coflow " + c.id), el("td", {}, c.n_flows), el("td", {}, bytes(c.bytes)),
    el("td", {}, duration(c.cct_ns)), el("td", {}, "t = " + (c.completed_ns / 1e9).toFixed(3) + " s")));
    fill($("completions").tBodies[0], rows);
    $("completions-empty").hidden = rows.length > 0;
  }

  function draw(s) {
    // Measured rates: bytes per second of the coordinator's clock since the
    // previous snapshot.
    if (prev && s.now_ns > prev.now_ns) {
      const dt = (s.now_ns - prev.now_ns) / 1e9;
      measured = new Map();
      for (const f of s.flows) {
        const key = f.host + ":" + f.flow_id;
        if (prev.bytes.has(key)) measured.set(key, 8 * (f.bytes - prev.bytes.get(key)) / dt);
      }
    }
    if (!prev || s.now_ns > prev.now_ns) {
      prev = { now_ns: s.now_ns, bytes: new Map(s.flows.map((f) => [f.host + ":" + f.flow_id, f.bytes])) };
    }
    $("summary").textContent = s.scheduler + " · " + s.n_hosts + " hosts at " + rate(s.host_rate_bps) +
      " · tick " + s.ticks + " (t = " + (s.now_ns / 1e9).toFixed(1) + " s)";
    const paused = s.flows.filter((f) => f.paused).length;
    $("cards").replaceChildren(
      card("coflows", "active tasks", s.coflows.length),
      card("flows", "active flows", s.flows.length + (paused ? " (" + paused + " paused)" : "")),
      card("completed", "completed tasks", s.completed_coflows),
      card("completed-bytes", "completed bytes", bytes(s.completed_bytes)),
      card("tick", "last round took", duration(s.last_tick_s * 1e9)),
      card("syncs", "refused / stale syncs", s.refused_syncs + " / " + s.stale_syncs));
    drawTasks(s);
    drawLinks(s);
    drawHosts(s);
    drawCompletions(s);
    document.body.dataset.ticks = s.ticks;
  }

  function setConn(ok, text) {
    const c = $("conn");
    c.className = "conn " + (ok ? "on" : "off");
    c.textContent = text;
  }

  function showLogin(message) {
    clearTimeout(timer);
    $("view").hidden = true;
    $("forget").hidden = true;
    $("login").hidden = false;
    $("login-error").textContent = message || "";
    setConn(false, "needs the token");
    $("token").focus();
  }

  async function poll() {
    const t = token();
    if (!t) return showLogin("");
    let r;
    try {
      r = await fetch("/state", {
        headers: { Authorization: "Bearer " + t }, cache: "no-store", referrerPolicy: "no-referrer",
      });
    } catch (e) {
      setConn(false, "offline: " + e.message);
      timer = setTimeout(poll, POLL_MS);
      return;
    }
    if (r.status === 401) {
      sessionStorage.removeItem(KEY);
      return showLogin((await r.text()).trim());
    }
    if (!r.ok) {
      setConn(false, "HTTP " + r.status);
    } else {
      $("login").hidden = true;
      $("view").hidden = false;
      $("forget").hidden = false;
      draw(await r.json());
      setConn(true, "live, every " + POLL_MS / 1000 + " s");
    }
    timer = setTimeout(poll, POLL_MS);
  }

  document.addEventListener("DOMContentLoaded", () => {
    takeFragmentToken();
    $("login").addEventListener("submit", (ev) => {
      ev.preventDefault();
      sessionStorage.setItem(KEY, $("token").value);
      $("token").value = "";
      poll();
    });
    $("forget").addEventListener("click", () => {
      sessionStorage.removeItem(KEY);
      showLogin("Token forgotten.");
    });
    poll();
  });
})();
