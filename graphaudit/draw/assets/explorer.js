/* graphaudit's HTML explorer: expand and collapse the drawing, search it, read what a box is.
 *
 * The page opens on a view Python laid out with Graphviz's dot (the SVG inline in the page).
 * Every other view is laid out here, by Graphviz compiled to WebAssembly (Viz.js, inlined
 * before this script), from DOT assembled exactly as graphaudit.draw.dot.body writes it:
 * the model (the JSON in script.ga-model) holds every item's DOT attribute list in each
 * form (node, closed box, open cluster), already written and escaped by Python; this script
 * only joins them. Text from the network is only ever written with textContent.
 */
(function () {
  "use strict";
  var ZOOM_STEP = 1.2, ACTUAL = 96 / 72, READABLE = 0.7 * ACTUAL, REVEAL_LIMIT = 400;
  var vizPromise = null;

  function engine() {
    if (!vizPromise) {
      if (typeof Viz === "undefined") {
        return Promise.reject(new Error("the Graphviz engine (viz-global.js) is missing from this page"));
      }
      vizPromise = Viz.instance();
    }
    return vizPromise;
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /* Pan and zoom of one SVG drawing in its canvas, through the SVG's viewBox. */
  function Viewer(canvas) {
    this.canvas = canvas;
    this.svg = null;
    this.view = { cx: 0, cy: 0, z: 1 };
    this.dragged = false;
    var self = this, drag = null;
    canvas.addEventListener("wheel", function (event) {
      if (!self.svg) return;
      event.preventDefault();
      var factor = Math.pow(ZOOM_STEP, -event.deltaY / 100);
      self.zoomAt(factor, event.clientX, event.clientY);
    }, { passive: false });
    canvas.addEventListener("pointerdown", function (event) {
      if (event.button !== 0 || !self.svg) return;
      drag = { x: event.clientX, y: event.clientY, cx: self.view.cx, cy: self.view.cy, moved: false };
      self.dragged = false;
    });
    canvas.addEventListener("pointermove", function (event) {
      if (!drag) return;
      if (!(event.buttons & 1)) { end(); return; }  /* the button was released elsewhere */
      var dx = event.clientX - drag.x, dy = event.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      if (!drag.moved) {
        drag.moved = true;
        canvas.classList.add("ga-dragging");
        try { canvas.setPointerCapture(event.pointerId); } catch (err) { /* panning goes on without it */ }
      }
      self.view.cx = drag.cx - dx / self.view.z;
      self.view.cy = drag.cy - dy / self.view.z;
      self.apply();
    });
    function end() {
      if (drag && drag.moved) { self.dragged = true; setTimeout(function () { self.dragged = false; }, 0); }
      drag = null;
      canvas.classList.remove("ga-dragging");
    }
    window.addEventListener("pointerup", end);
    window.addEventListener("pointercancel", end);
  }
  Viewer.prototype.show = function (svg) {
    var box = svg.viewBox && svg.viewBox.baseVal;
    var w = parseFloat(svg.getAttribute("width")) || (box && box.width) || 100;
    var h = parseFloat(svg.getAttribute("height")) || (box && box.height) || 100;
    this.natural = box && box.width ? { x: box.x, y: box.y, w: box.width, h: box.height } : { x: 0, y: 0, w: w, h: h };
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
    if (this.svg && this.svg.parentNode === this.canvas) this.canvas.replaceChild(svg, this.svg);
    else this.canvas.insertBefore(svg, this.canvas.firstChild);
    this.svg = svg;
  };
  Viewer.prototype.size = function () {
    return { w: this.canvas.clientWidth || 800, h: this.canvas.clientHeight || 600 };
  };
  Viewer.prototype.apply = function () {
    if (!this.svg) return;
    var size = this.size(), w = size.w / this.view.z, h = size.h / this.view.z;
    this.svg.setAttribute("viewBox", [this.view.cx - w / 2, this.view.cy - h / 2, w, h].join(" "));
  };
  Viewer.prototype.fitZoom = function (box) {
    var size = this.size();
    return Math.min(size.w / box.w, size.h / box.h) * 0.96;
  };
  Viewer.prototype.fit = function (cap) {
    var n = this.natural;
    this.view = { cx: n.x + n.w / 2, cy: n.y + n.h / 2, z: Math.min(this.fitZoom(n), cap || 2 * ACTUAL) };
    this.apply();
  };
  Viewer.prototype.start = function () {
    /* Fit the drawing when it stays readable that way, else fit its width and show its top. */
    var n = this.natural, size = this.size(), z = this.fitZoom(n);
    if (z >= READABLE) return this.fit(ACTUAL);
    z = Math.max(Math.min(size.w / n.w * 0.96, ACTUAL), READABLE);
    this.view = { cx: n.x + Math.min(n.w, size.w / z) / 2, cy: n.y + size.h / z / 2, z: z };
    this.apply();
  };
  /* Frame boxes (in the drawing's units): all of them in view, centred, never above actual size.
     The first view of a report with findings: the reader came for the flagged boxes. */
  Viewer.prototype.frame = function (boxes) {
    var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    boxes.forEach(function (b) { x0 = Math.min(x0, b.x); y0 = Math.min(y0, b.y); x1 = Math.max(x1, b.x + b.w); y1 = Math.max(y1, b.y + b.h); });
    var union = { w: x1 - x0 + 40, h: y1 - y0 + 40 };
    this.view = { cx: (x0 + x1) / 2, cy: (y0 + y1) / 2, z: Math.max(Math.min(this.fitZoom(union), ACTUAL), 0.02) };
    this.apply();
  };
  Viewer.prototype.zoomAt = function (factor, clientX, clientY) {
    var rect = this.canvas.getBoundingClientRect(), size = this.size();
    var z = Math.max(0.02, Math.min(this.view.z * factor, 8));
    var px = clientX === undefined ? size.w / 2 : clientX - rect.left;
    var py = clientY === undefined ? size.h / 2 : clientY - rect.top;
    var ux = this.view.cx + (px - size.w / 2) / this.view.z, uy = this.view.cy + (py - size.h / 2) / this.view.z;
    this.view = { cx: ux - (px - size.w / 2) / z, cy: uy - (py - size.h / 2) / z, z: z };
    this.apply();
  };
  /* The box of an element of the drawing, in the drawing's own units. */
  Viewer.prototype.boxOf = function (node) {
    var r = node.getBoundingClientRect(), c = this.canvas.getBoundingClientRect(), size = this.size();
    var x0 = this.view.cx + (r.left - c.left - size.w / 2) / this.view.z;
    var y0 = this.view.cy + (r.top - c.top - size.h / 2) / this.view.z;
    return { x: x0, y: y0, w: r.width / this.view.z, h: r.height / this.view.z };
  };
  /* Bring boxes into view: centred, zoomed out (never in) when they do not fit. */
  Viewer.prototype.reveal = function (boxes) {
    if (!boxes.length) return;
    var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    boxes.forEach(function (b) { x0 = Math.min(x0, b.x); y0 = Math.min(y0, b.y); x1 = Math.max(x1, b.x + b.w); y1 = Math.max(y1, b.y + b.h); });
    var union = { w: x1 - x0 + 20, h: y1 - y0 + 20 }, size = this.size();
    var w = size.w / this.view.z, h = size.h / this.view.z, left = this.view.cx - w / 2, top = this.view.cy - h / 2;
    if (x0 >= left && y0 >= top && x1 <= left + w && y1 <= top + h) return;  /* in view already: stay */
    this.view = { cx: (x0 + x1) / 2, cy: (y0 + y1) / 2, z: Math.max(Math.min(this.view.z, this.fitZoom(union)), 0.02) };
    this.apply();
  };

  function Explorer(root) {
    var self = this;
    var model = JSON.parse(root.querySelector("script.ga-model").textContent);
    var items = model.items, runs = model.runs, N = items.length, R = runs.length;
    var children = items.map(function () { return []; });
    var runsUnder = items.map(function () { return []; });
    var runOf = new Int32Array(N).fill(-1);
    var own = items.map(function () { return []; }), under = items.map(function () { return []; });
    items.forEach(function (item, i) { if (item.p >= 0) children[item.p].push(i); });
    runs.forEach(function (run, r) {
      if (run.p >= 0) runsUnder[run.p].push(r);
      run.m.forEach(function (m) { runOf[m] = r; });
    });
    model.findings.forEach(function (f, fi) {
      f.items.forEach(function (i) {
        if (own[i].indexOf(fi) < 0) own[i].push(fi);
        for (var p = items[i].p; p >= 0; p = items[p].p) if (under[p][under[p].length - 1] !== fi) under[p].push(fi);
      });
    });
    var canvas = root.querySelector(".ga-canvas.ga-network");
    var viewer = new Viewer(canvas);
    var status = root.querySelector(".ga-status");
    var details = root.querySelector(".ga-details");
    var legendBody = root.querySelector(".ga-legend-body");
    var rows = Array.prototype.slice.call(root.querySelectorAll("tr.ga-finding"));
    var tableWrap = root.querySelector(".ga-table-wrap");
    var state = null, layout = null, selected = -1, chosen = -1, generation = 0, firstSvg = null;
    this.model = model;
    this.viewer = viewer;

    function initial() {
      var st = { open: new Uint8Array(N), active: new Uint8Array(R), unrolled: new Uint8Array(R), roll: model.roll };
      model.open.forEach(function (i) { st.open[i] = 1; });
      model.active.forEach(function (r) { st.active[r] = 1; });
      return st;
    }
    function copy(st) {
      return { open: st.open.slice(), active: st.active.slice(), unrolled: st.unrolled.slice(), roll: st.roll };
    }

    /* Where every item is drawn: itself, the closed cluster or the roll-up box it is in
       (graphaudit.draw.collapse.assign). Boxes 0..N-1 are items, N + r the roll-up r. */
    function assign(st) {
      var drawn = new Int32Array(N);
      for (var i = 0; i < N; i++) {
        var p = items[i].p;
        if (p >= 0 && (drawn[p] !== p || !st.open[p])) drawn[i] = drawn[p];
        else drawn[i] = runOf[i] >= 0 && st.active[runOf[i]] ? N + runOf[i] : i;
      }
      return drawn;
    }
    function rank(k) { return k < N ? k : runs[k - N].m[0]; }
    function idOf(k) { return k < N ? items[k].id : runs[k - N].id; }

    /* The drawn boxes of a state (graphaudit.draw.marks.shown_items). */
    function entries(st, drawn) {
      var map = new Map(), order = [], used = new Uint8Array(R), i, r;
      for (i = 0; i < N; i++) {
        if (drawn[i] >= N) used[drawn[i] - N] = 1;
        if (drawn[i] !== i) continue;
        var form = children[i].length ? (st.open[i] ? "cluster" : "box") : "node";
        map.set(i, { form: form, parent: items[i].p >= 0 ? drawn[items[i].p] : -1, children: [] });
        order.push(i);
      }
      for (r = 0; r < R; r++) {
        if (!st.active[r] || !used[r]) continue;
        map.set(N + r, { form: "box", parent: runs[r].p >= 0 ? drawn[runs[r].p] : -1, children: [] });
        order.push(N + r);
      }
      order.forEach(function (k) { var e = map.get(k); if (e.parent >= 0) map.get(e.parent).children.push(k); });
      var byRank = function (a, b) { return rank(a) - rank(b); };
      order.forEach(function (k) { map.get(k).children.sort(byRank); });
      var top = order.filter(function (k) { return map.get(k).parent < 0; }).sort(byRank);
      return { map: map, order: order, top: top };
    }

    /* The DOT of a state, line for line as graphaudit.draw.dot.body writes it. */
    function buildDot(st) {
      var drawn = assign(st), shown = entries(st, drawn), map = shown.map, lines = [];
      function attrs(k, form) {
        if (k >= N) return runs[k - N].b;
        return form === "node" ? items[k].n : form === "box" ? items[k].b : items[k].g;
      }
      function emit(k, indent) {
        var e = map.get(k), id = idOf(k);
        if (e.form !== "cluster") { lines.push(indent + '"' + id + '"' + attrs(k, e.form) + "\n"); return; }
        lines.push(indent + 'subgraph "cluster_' + id + '" {\n' + indent + "\tgraph" + attrs(k, "cluster") + "\n");
        e.children.forEach(function (c) { emit(c, indent + "\t"); });
        lines.push(indent + "}\n");
      }
      shown.top.forEach(function (k) { emit(k, "\t"); });
      var beside = [];
      model.edges.forEach(function (e) { if (e[2] === "loss" && beside.indexOf(drawn[e[0]]) < 0) beside.push(drawn[e[0]]); });
      if (beside.length && model.loss >= 0) {
        if (beside.indexOf(model.loss) < 0) beside.push(model.loss);
        lines.push("\t{rank=same; " + beside.map(function (k) { return '"' + idOf(k) + '"'; }).join(" ") + "}\n");
      }
      var merged = new Map();
      function edge(s, d, kind) {
        var key = s + "," + d + "," + kind, m = merged.get(key);
        if (!m) { m = { s: s, d: d, kind: kind, found: [] }; merged.set(key, m); }
        return m;
      }
      model.edges.forEach(function (e) {
        var s = drawn[e[0]], d = drawn[e[1]];
        if (s === d) return;
        var m = edge(s, d, e[2]);
        if (e[3] && m.found.indexOf(e[3]) < 0) m.found.push(e[3]);
      });
      if (model.view === "structure") {
        [shown.top].concat(shown.order.map(function (k) { return map.get(k).children; })).forEach(function (list) {
          for (var j = 0; j + 1 < list.length; j++) edge(list[j], list[j + 1], "order");
        });
      }
      function leaf(k, last) {
        while (map.get(k).children.length) { var c = map.get(k).children; k = c[last ? c.length - 1 : 0]; }
        return k;
      }
      function inside(k, cluster) {
        for (; k >= 0; k = map.get(k).parent) if (k === cluster) return true;
        return false;
      }
      var labels = model.labels === null ? map.size <= model.labelLimit : model.labels;
      merged.forEach(function (m) {
        var parts = [], tail = leaf(m.s, true), head = leaf(m.d, false);
        if (m.kind !== "order") {
          if (tail !== m.s && !inside(m.d, m.s)) parts.push('ltail="cluster_' + idOf(m.s) + '"');
          if (head !== m.d && !inside(m.s, m.d)) parts.push('lhead="cluster_' + idOf(m.d) + '"');
        }
        if (labels && m.found.length) {
          parts.push('label="' + m.found.slice(0, 3).concat(m.found.length > 3 ? ["…"] : []).join("\\n") + '"');
        }
        parts.push(model.edgeText[m.kind]);
        lines.push('\t"' + idOf(tail) + '" -> "' + idOf(head) + '" [' + parts.join(" ") + "]\n");
      });
      var targets = model.findings.map(function (f) {
        var found = [];
        f.items.forEach(function (i) { if (found.indexOf(drawn[i]) < 0) found.push(drawn[i]); });
        return found;
      });
      return { dot: model.head + lines.join("") + "}\n", drawn: drawn, shown: shown, targets: targets, count: map.size };
    }
    this.buildDot = function () { return buildDot(state).dot; };
    /* The state shown: the items open and the roll-ups active, by index (graphaudit.draw.explorer.state_dot). */
    this.state = function () {
      var open = [], active = [], i;
      for (i = 0; i < N; i++) if (state.open[i]) open.push(i);
      for (i = 0; i < R; i++) if (state.active[i]) active.push(i);
      return { open: open, active: active };
    };

    function say(text, error) {
      status.textContent = text;
      status.classList.toggle("ga-error", !!error);
    }

    /* Put a laid-out SVG in the canvas and wire it to the layout it shows. *keep* is the box
       (of the layout shown so far) that stays where it is on the screen. */
    function attach(svg, built, keep) {
      var before = keep !== undefined && layout ? layout.nodes.get(keep) : null;
      var anchor = before ? viewer.boxOf(before) : null;
      viewer.show(svg);
      var nodes = new Map(), keyOf = new Map(), byId = new Map();
      Array.prototype.forEach.call(svg.querySelectorAll("g.node, g.cluster"), function (g) { byId.set(g.id, g); });
      built.shown.map.forEach(function (e, k) {
        var g = byId.get(idOf(k));
        if (g) { nodes.set(k, g); keyOf.set(g, k); }
      });
      var boxFindings = new Map();
      built.targets.forEach(function (ks, fi) {
        ks.forEach(function (k) { if (!boxFindings.has(k)) boxFindings.set(k, []); boxFindings.get(k).push(fi); });
      });
      layout = { built: built, nodes: nodes, keyOf: keyOf, boxFindings: boxFindings };
      var after = keep === undefined ? null : nodes.get(built.drawn[keep < N ? keep : runs[keep - N].m[0]]);
      if (anchor && after) {
        viewer.apply();
        var now = viewer.boxOf(after);
        viewer.view.cx += now.x - anchor.x;
        viewer.view.cy += now.y - anchor.y;
        viewer.apply();
      } else if (keep === undefined) {
        /* The first view: frame what is flagged, or, with nothing flagged, the whole network. */
        viewer.fit(ACTUAL);
        var flagged = [];
        boxFindings.forEach(function (list, k) { if (nodes.has(k)) flagged.push(viewer.boxOf(nodes.get(k))); });
        if (flagged.length) viewer.frame(flagged);
      } else {
        viewer.apply();
      }
      toggles();
      legend();
      applyFilter();
      if (selected >= 0) pick(nodes.has(selected) ? selected : built.drawn[selected < N ? selected : runs[selected - N].m[0]], false);
      if (chosen >= 0) highlight(chosen);
      say(built.count + " nodes drawn");
    }

    /* The ⊕ / ⊖ buttons on every box that opens and every cluster that closes. */
    function toggles() {
      var graph = viewer.svg.querySelector("g.graph") || viewer.svg, SVG_NS = viewer.svg.namespaceURI;
      layout.nodes.forEach(function (g, k) {
        var e = layout.built.shown.map.get(k);
        if (e.form === "node") return;
        var box;
        try { box = g.getBBox(); } catch (err) { return; }
        var open = e.form === "cluster";
        var x = box.x + box.width - 2, y = box.y + 2;  /* a badge on the top right corner */
        var t = document.createElementNS(SVG_NS, "g");
        t.setAttribute("class", "ga-toggle " + (open ? "ga-close" : "ga-open"));
        t.setAttribute("data-box", String(k));
        var c = document.createElementNS(SVG_NS, "circle");
        c.setAttribute("cx", x); c.setAttribute("cy", y); c.setAttribute("r", 7);
        var s = document.createElementNS(SVG_NS, "text");
        s.setAttribute("x", x); s.setAttribute("y", y + 4); s.setAttribute("text-anchor", "middle");
        s.textContent = open ? "−" : "+";
        var title = document.createElementNS(SVG_NS, "title");
        title.textContent = open ? "close this cluster" : "open this box";
        t.appendChild(title); t.appendChild(c); t.appendChild(s);
        graph.appendChild(t);
      });
    }

    function relayout(next, keep) {
      var built = buildDot(next), mine = ++generation;
      if (built.count > model.maxNodes) {
        say("that view would draw " + built.count + " nodes, over max_nodes=" + model.maxNodes + ": open a smaller part", true);
        return Promise.resolve(false);
      }
      canvas.classList.add("ga-busy");
      say("laying out " + built.count + " nodes…");
      return new Promise(function (resolve) { setTimeout(resolve, 0); }).then(engine).then(function (viz) {
        var t0 = performance.now(), svg = viz.renderSVGElement(built.dot);
        var ms = performance.now() - t0;
        if (mine !== generation) return false;
        state = next;
        attach(svg, built, keep);
        canvas.classList.remove("ga-busy");
        root.setAttribute("data-layout-ms", String(Math.round(ms)));
        say(built.count + " nodes drawn · laid out in " + Math.round(ms) + " ms");
        return true;
      }).catch(function (err) {
        vizPromise = null;  /* an aborted WebAssembly instance cannot be used again */
        canvas.classList.remove("ga-busy");
        say("could not lay out this view: " + (err && err.message ? err.message : err), true);
        return false;
      });
    }

    function openBox(k) {
      var next = copy(state);
      if (k >= N) { next.active[k - N] = 0; next.unrolled[k - N] = 1; }
      else {
        next.open[k] = 1;
        if (next.roll) runsUnder[k].forEach(function (r) { if (!next.unrolled[r]) next.active[r] = 1; });
      }
      return relayout(next, k);
    }
    function closeBox(k) {
      var next = copy(state);
      next.open[k] = 0;
      return relayout(next, k);
    }
    function rollAgain(r) {
      var next = copy(state);
      next.active[r] = 1; next.unrolled[r] = 0;
      return relayout(next, runs[r].m[0]);
    }
    this.toggle = function (k) {
      var e = layout.built.shown.map.get(k);
      if (!e || e.form === "node") return Promise.resolve(false);
      return e.form === "cluster" ? closeBox(k) : openBox(k);
    };
    /* The state in which items are each drawn as themselves (null: that would draw too much). */
    function revealing(list, st) {
      var next = copy(st);
      list.forEach(function (i) {
        for (var k = i; k >= 0; k = items[k].p) {
          if (k !== i) {
            next.open[k] = 1;
            if (next.roll) runsUnder[k].forEach(function (r) { if (!next.unrolled[r]) next.active[r] = 1; });
          }
        }
        for (var j = i; j >= 0; j = items[j].p) if (runOf[j] >= 0) { next.active[runOf[j]] = 0; next.unrolled[runOf[j]] = 1; }
      });
      var drawn = assign(next), count = new Set(drawn).size;
      return count <= Math.min(model.maxNodes, REVEAL_LIMIT) ? next : null;
    }
    function same(a, b) {
      for (var i = 0; i < N; i++) if (a.open[i] !== b.open[i]) return false;
      for (var r = 0; r < R; r++) if (a.active[r] !== b.active[r]) return false;
      return true;
    }
    function show(list) {
      var next = revealing(list, state);
      if (!next || same(next, state)) return Promise.resolve(true);
      return relayout(next, layout.built.drawn[list[0]]);
    }

    function clearClass(cls) {
      Array.prototype.forEach.call(viewer.svg.querySelectorAll("." + cls), function (g) { g.classList.remove(cls); });
    }
    function pick(k, focus) {
      clearClass("ga-picked");
      selected = k;
      var g = layout && layout.nodes.get(k);
      if (g) g.classList.add("ga-picked");
      describe(k);
      if (focus && g) viewer.reveal([viewer.boxOf(g)]);
    }
    function highlight(fi) {
      clearClass("ga-hl");
      var boxes = [];
      (layout.built.targets[fi] || []).forEach(function (k) {
        var g = layout.nodes.get(k);
        if (g) { g.classList.add("ga-hl"); boxes.push(g); }
      });
      legend();
      return boxes;
    }
    function selectRow(fi, scroll) {
      rows.forEach(function (row) { row.classList.toggle("ga-selected", Number(row.getAttribute("data-index")) === fi); });
      var row = rows[fi];
      if (scroll && row && !row.hidden) tableWrap.scrollTop = row.offsetTop - tableWrap.clientHeight / 2;
    }
    /* A finding: open what hides its nodes (within reason), highlight them, bring them into view. */
    function selectFinding(fi) {
      chosen = fi;
      selectRow(fi, false);
      var f = model.findings[fi];
      if (!f.items.length) return panelFinding(fi) || Promise.resolve(say("this finding is not drawn"));
      showNetwork();
      return show(f.items).then(function () {
        var boxes = highlight(fi);
        if (boxes.length) {
          viewer.reveal(boxes.map(function (g) { return viewer.boxOf(g); }));
          pick(layout.built.targets[fi][0], false);
          say(f.check_id + " on " + boxes.length + " box" + (boxes.length > 1 ? "es" : ""));
        }
      });
    }
    this.selectFinding = selectFinding;

    function findingNote(fi) {
      var f = model.findings[fi], box = el("div", "ga-finding-note ga-sev-" + f.severity);
      box.appendChild(el("b", "", f.check_id + " "));
      box.appendChild(el("span", "", f.name + " [" + f.severity + "] " + f.subject));
      box.appendChild(el("div", "", f.message));
      box.appendChild(el("div", "", "Fix: " + f.fix));
      box.addEventListener("click", function () { selectFinding(fi); });
      box.style.cursor = "pointer";
      return box;
    }
    function button(text, action) {
      var b = el("button", "", text);
      b.type = "button";
      b.addEventListener("click", action);
      return b;
    }
    /* The details pane: what box k is. */
    function describe(k) {
      while (details.childNodes.length > 1) details.removeChild(details.lastChild);
      if (k < 0) return;
      var e = layout.built.shown.map.get(k), found = [], inner = [];
      var buttons = el("div", "ga-buttons");
      if (k >= N) {
        var run = runs[k - N];
        details.appendChild(el("h3", "", run.l));
        details.appendChild(el("p", "ga-note", run.m.length + " items rolled up: " + items[run.m[0]].l + " … " + items[run.m[run.m.length - 1]].l));
        run.m.forEach(function (m) { own[m].concat(under[m]).forEach(function (fi) { if (inner.indexOf(fi) < 0) inner.push(fi); }); });
        buttons.appendChild(button("open the roll-up", function () { openBox(k); }));
      } else {
        var item = items[k];
        details.appendChild(el("h3", "", item.l));
        var kind = e && e.form === "box" ? "closed " + item.t : item.t;
        details.appendChild(el("p", "ga-note", kind));
        var table = el("table");
        item.x.rows.forEach(function (r) {
          var tr = el("tr"); tr.appendChild(el("td", "", r[0])); tr.appendChild(el("td", "", r[1])); table.appendChild(tr);
        });
        details.appendChild(table);
        if (item.x.params.length) {
          details.appendChild(el("h2", "", "its parameters"));
          var ptable = el("table");
          item.x.params.forEach(function (p) {
            var tr = el("tr"); tr.appendChild(el("td", "", p[0])); tr.appendChild(el("td", "", [p[1], p[2], p[3]].join(" ").trim()));
            ptable.appendChild(tr);
          });
          details.appendChild(ptable);
        }
        found = own[k];
        inner = under[k];
        if (e && e.form === "box") buttons.appendChild(button("open", function () { openBox(k); }));
        if (e && e.form === "cluster") buttons.appendChild(button("close", function () { closeBox(k); }));
        if (runOf[k] >= 0 && state.unrolled[runOf[k]]) {
          var r = runOf[k];
          buttons.appendChild(button("roll up " + runs[r].l + " again", function () { rollAgain(r); }));
        }
        if (item.p >= 0) buttons.appendChild(button("select its parent", function () { pick(layout.built.drawn[item.p], true); }));
      }
      details.appendChild(buttons);
      if (found.length) {
        details.appendChild(el("h2", "", "findings"));
        found.forEach(function (fi) { details.appendChild(findingNote(fi)); });
      }
      var rest = inner.filter(function (fi) { return found.indexOf(fi) < 0; });
      if (rest.length) {
        details.appendChild(el("h2", "", "findings inside"));
        rest.forEach(function (fi) { details.appendChild(findingNote(fi)); });
      }
    }

    /* The legend: one entry per kind of box drawn, one per severity shown, and the outline of
       the finding clicked while one is. */
    function legend() {
      while (legendBody.firstChild) legendBody.removeChild(legendBody.firstChild);
      var kinds = model.legend.kinds, present = {}, whys = {}, severities = {};
      layout.built.shown.map.forEach(function (e, k) {
        if (e.form === "cluster") return;
        var kind = e.form === "box" ? (k >= N ? "rollup" : "collapsed") : items[k].t === "output" ? "input" : items[k].t;
        present[kind] = true;
        if (kind === "parameter") whys[items[k].w || "asked"] = true;
      });
      layout.boxFindings.forEach(function (list) { list.forEach(function (fi) { severities[model.findings[fi].severity] = true; }); });
      Object.keys(kinds).forEach(function (kind) {
        if (!present[kind]) return;
        var text = kinds[kind].text, shape = kinds[kind].shape;
        if (kind === "cell" && model.view === "traced") { text = "cell never called"; shape = "dashed"; }
        if (kind === "parameter") {
          var reasons = Object.keys(model.legend.reasons).filter(function (w) { return whys[w]; });
          if (reasons.length && !whys.asked) text += " (" + reasons.map(function (w) { return model.legend.reasons[w]; }).join(" or ") + ")";
        }
        legendBody.appendChild(swatch(shape, kinds[kind].fill, "#5f6b7a", 1));
        legendBody.appendChild(el("span", "", text));
      });
      ["error", "warning", "info"].forEach(function (s) {
        if (!severities[s]) return;
        legendBody.appendChild(swatch("box", model.legend.severities[s].fill, model.legend.severities[s].color, 2.5));
        legendBody.appendChild(el("span", "", s + " finding [check ID]"));
      });
      if (chosen >= 0 && (layout.built.targets[chosen] || []).some(function (k) { return layout.nodes.has(k); })) {
        legendBody.appendChild(swatch("box", "#ffffff", "#9c27b0", 3));
        legendBody.appendChild(el("span", "", "the finding you clicked"));
      }
    }
    /* A small drawing of a Graphviz shape, for the legend. */
    var SHAPES = {
      note: "2,2 22,2 28,7 28,16 2,16", cds: "2,2 24,2 29,9 24,16 2,16",
      octagon: "8,2 22,2 28,6 28,12 22,16 8,16 2,12 2,6", box3d: "2,5 25,5 25,17 2,17"
    };
    function swatch(shape, fill, stroke, width) {
      var ns = viewer.svg.namespaceURI, svg = document.createElementNS(ns, "svg"), node;
      svg.setAttribute("width", "32"); svg.setAttribute("height", "19"); svg.setAttribute("class", "ga-sw");
      if (shape === "ellipse") {
        node = document.createElementNS(ns, "ellipse");
        [["cx", 15], ["cy", 9.5], ["rx", 13], ["ry", 7]].forEach(function (a) { node.setAttribute(a[0], a[1]); });
      } else if (SHAPES[shape]) {
        node = document.createElementNS(ns, "polygon");
        node.setAttribute("points", SHAPES[shape]);
        if (shape === "box3d") {
          var back = document.createElementNS(ns, "polyline");
          back.setAttribute("points", "2,5 5,2 28,2 28,14 25,17");
          back.setAttribute("fill", "none"); back.setAttribute("stroke", stroke);
          svg.appendChild(back);
        }
      } else {
        node = document.createElementNS(ns, "rect");
        [["x", 2], ["y", 2], ["width", 26], ["height", 14], ["rx", 4]].forEach(function (a) { node.setAttribute(a[0], a[1]); });
        if (shape === "dashed") node.setAttribute("stroke-dasharray", "4 2");
      }
      node.setAttribute("fill", fill); node.setAttribute("stroke", stroke); node.setAttribute("stroke-width", width);
      svg.appendChild(node);
      return svg;
    }

    /* Filters: rows by severity and check; flagged boxes of hidden findings fade. */
    var checkSelect = root.querySelector(".ga-check-filter");
    var severityBoxes = Array.prototype.slice.call(root.querySelectorAll("input.ga-severity-filter"));
    function applyFilter() {
      var allowed = {}, check = checkSelect.value, visible = {}, count = 0;
      severityBoxes.forEach(function (box) { allowed[box.value] = box.checked; });
      rows.forEach(function (row) {
        var fi = Number(row.getAttribute("data-index")), f = model.findings[fi];
        var on = allowed[f.severity] && (!check || f.check_id === check);
        row.hidden = !on;
        if (on) { count += 1; visible[fi] = true; }
      });
      if (layout) {
        layout.boxFindings.forEach(function (list, k) {
          var g = layout.nodes.get(k);
          if (g) g.classList.toggle("ga-dim", !list.some(function (fi) { return visible[fi]; }));
        });
      }
      root.querySelector(".ga-shown").textContent = String(count);
    }
    severityBoxes.forEach(function (box) { box.addEventListener("change", applyFilter); });
    checkSelect.addEventListener("change", applyFilter);
    rows.forEach(function (row) {
      var fi = Number(row.getAttribute("data-index"));
      row.addEventListener("click", function () { selectFinding(fi); });
      row.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); selectFinding(fi); }
      });
    });

    /* Clicks on the drawing: a toggle opens or closes, a box is selected (and its finding). */
    function boxAt(target) {
      var t = target.closest ? target.closest(".ga-toggle, g.node, g.cluster") : null;
      if (!t) return null;
      if (t.classList.contains("ga-toggle")) return { toggle: Number(t.getAttribute("data-box")) };
      return layout.keyOf.has(t) ? { box: layout.keyOf.get(t) } : null;
    }
    canvas.addEventListener("click", function (event) {
      if (viewer.dragged || !layout) return;
      var hit = boxAt(event.target);
      if (!hit) return;
      if (hit.toggle !== undefined) { self.toggle(hit.toggle); return; }
      if (hit.box === undefined) return;
      pick(hit.box, false);
      var list = layout.boxFindings.get(hit.box) || [];
      var row = list.map(function (fi) { return rows[fi]; }).filter(function (r) { return r && !r.hidden; })[0];
      if (row) {
        chosen = Number(row.getAttribute("data-index"));
        selectRow(chosen, true);
        highlight(chosen);
      }
    });
    canvas.addEventListener("dblclick", function (event) {
      var hit = layout && boxAt(event.target);
      if (hit && hit.box !== undefined) { event.preventDefault(); self.toggle(hit.box); }
    });
    canvas.addEventListener("keydown", function (event) {
      var keys = { "+": ZOOM_STEP, "=": ZOOM_STEP, "-": 1 / ZOOM_STEP };
      if (keys[event.key]) viewer.zoomAt(keys[event.key]);
      else if (event.key === "0") viewer.fit();
      else if (event.key === "1") { viewer.view.z = ACTUAL; viewer.apply(); }
      else if (event.key === "Enter" && selected >= 0) self.toggle(selected);
      else return;
      event.preventDefault();
    });
    root.querySelector(".ga-fit").addEventListener("click", function () { current().fit(); });
    root.querySelector(".ga-zoom-in").addEventListener("click", function () { current().zoomAt(ZOOM_STEP); });
    root.querySelector(".ga-zoom-out").addEventListener("click", function () { current().zoomAt(1 / ZOOM_STEP); });
    root.querySelector(".ga-actual").addEventListener("click", function () { var v = current(); v.view.z = ACTUAL; v.apply(); });
    root.querySelector(".ga-reset").addEventListener("click", function () {
      generation += 1;
      state = initial();
      attach(firstSvg.cloneNode(true), buildDot(state));
    });

    /* Search by path, class or parameter name: every word must match. */
    var search = root.querySelector(".ga-search"), results = root.querySelector(".ga-results"), hits = [], active = 0;
    function find(text) {
      var words = text.toLowerCase().split(/\s+/).filter(Boolean), found = [];
      if (!words.length) return found;
      for (var i = 0; i < N && found.length < 200; i++) {
        var s = items[i].s;
        if (words.every(function (w) { return s.indexOf(w) >= 0; })) found.push(i);
      }
      var exact = words.join(" ");
      found.sort(function (a, b) {
        var sa = items[a].s.split(" "), sb = items[b].s.split(" ");
        var ea = sa.indexOf(exact) >= 0 ? 0 : 1, eb = sb.indexOf(exact) >= 0 ? 0 : 1;
        return ea - eb || sa[0].length - sb[0].length || a - b;
      });
      return found.slice(0, 30);
    }
    function showResults() {
      while (results.firstChild) results.removeChild(results.firstChild);
      hits.forEach(function (i, j) {
        var li = el("li", j === active ? "ga-active" : "", items[i].l);
        li.appendChild(el("span", "ga-kind", items[i].t + (items[i].s.split(" ")[0] !== items[i].l.toLowerCase() ? " · " + items[i].s.split(" ")[0] : "")));
        li.addEventListener("mousedown", function (event) { event.preventDefault(); go(i); });
        results.appendChild(li);
      });
      results.hidden = !hits.length;
    }
    function go(i) {
      results.hidden = true;
      showNetwork();
      return show([i]).then(function () {
        var k = layout.built.drawn[i];
        pick(k, true);
        say("found " + items[i].l + (k !== i ? " (inside a closed box: too much to open)" : ""));
      });
    }
    this.go = go;
    search.addEventListener("input", function () { hits = find(search.value); active = 0; showResults(); });
    search.addEventListener("keydown", function (event) {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        if (hits.length) active = (active + (event.key === "ArrowDown" ? 1 : hits.length - 1)) % hits.length;
        showResults();
      } else if (event.key === "Enter" && hits.length) {
        event.preventDefault();
        go(hits[active]);
      } else if (event.key === "Escape") {
        results.hidden = true;
      }
    });
    search.addEventListener("blur", function () { results.hidden = true; });

    /* Tabs: the network and the data pipelines, each panned and zoomed on its own. */
    var panels = Array.prototype.slice.call(root.querySelectorAll(".ga-canvas.ga-panel")), panelViewers = [];
    panels.forEach(function (panel) {
      var v = new Viewer(panel), svg = panel.querySelector("svg");
      if (svg) v.show(svg);
      panelViewers.push(v);
    });
    var shownPanel = -1;
    function current() { return shownPanel >= 0 ? panelViewers[shownPanel] : viewer; }
    var legendBox = root.querySelector(".ga-legend");
    function showPanel(index) {
      shownPanel = index;
      canvas.hidden = index >= 0;
      legendBox.hidden = index >= 0;  /* the legend is the network's: a pipeline has none to show */
      panels.forEach(function (p, i) { p.hidden = i !== index; });
      Array.prototype.forEach.call(root.querySelectorAll(".ga-tab"), function (tab) {
        tab.classList.toggle("ga-tab-on", tab.getAttribute("data-panel") === (index >= 0 ? String(index) : ""));
      });
      if (index >= 0 && !panelViewers[index].shown) { panelViewers[index].shown = true; panelViewers[index].start(); }
    }
    function showNetwork() { if (shownPanel >= 0) showPanel(-1); }
    function panelFinding(fi) {
      var ids = (rows[fi] && rows[fi].getAttribute("data-targets") || "").split(" ").filter(Boolean);
      for (var p = 0; p < panels.length; p++) {
        var found = ids.map(function (id) { return panels[p].querySelector('g[id="' + id + '"]'); }).filter(Boolean);
        if (found.length) {
          showPanel(p);
          Array.prototype.forEach.call(panels[p].querySelectorAll(".ga-hl"), function (g) { g.classList.remove("ga-hl"); });
          found.forEach(function (g) { g.classList.add("ga-hl"); });
          panelViewers[p].reveal(found.map(function (g) { return panelViewers[p].boxOf(g); }));
          return Promise.resolve(true);
        }
      }
      return null;
    }
    Array.prototype.forEach.call(root.querySelectorAll(".ga-tab"), function (tab) {
      tab.addEventListener("click", function () {
        var p = tab.getAttribute("data-panel");
        showPanel(p === "" ? -1 : Number(p));
      });
    });
    function resized() { viewer.apply(); panelViewers.forEach(function (v) { v.apply(); }); }
    window.addEventListener("resize", resized);

    /* The splitter between the drawing and the side panel: drag it (or press the arrow keys)
       to give the findings and their messages more room, or the drawing more. */
    var side = root.querySelector(".ga-side"), splitter = root.querySelector(".ga-splitter"), split = null;
    function sideWidth(px) {
      var main = root.querySelector(".ga-main").clientWidth;
      px = Math.max(220, Math.min(px, main - 200));
      side.style.flexBasis = px + "px";
      resized();
    }
    if (splitter && side) {
      splitter.addEventListener("pointerdown", function (event) {
        if (event.button !== 0) return;
        event.preventDefault();
        split = { x: event.clientX, w: side.getBoundingClientRect().width };
        try { splitter.setPointerCapture(event.pointerId); } catch (err) { /* dragging goes on without it */ }
        root.classList.add("ga-resizing");
      });
      splitter.addEventListener("pointermove", function (event) {
        if (split) sideWidth(split.w + split.x - event.clientX);  /* the panel is on the right */
      });
      var stop = function () { split = null; root.classList.remove("ga-resizing"); };
      splitter.addEventListener("pointerup", stop);
      splitter.addEventListener("pointercancel", stop);
      splitter.addEventListener("keydown", function (event) {
        var step = { ArrowLeft: 40, ArrowRight: -40 }[event.key];
        if (!step) return;
        event.preventDefault();
        sideWidth(side.getBoundingClientRect().width + step);
      });
    }

    /* The first view: Python's SVG, for the state the model opens in. */
    state = initial();
    var svg = canvas.querySelector("svg");
    firstSvg = svg.cloneNode(true);
    attach(svg, buildDot(state));
    if (!N && panels.length) showPanel(0);  /* a report of data pipelines alone */
    setTimeout(function () { engine().catch(function () {}); }, 50);  /* warm the engine up */
    root.setAttribute("data-ready-ms", String(Math.round(performance.now())));
    root.gaExplorer = this;
  }

  Array.prototype.forEach.call(document.querySelectorAll(".ga-app"), function (root) {
    if (!root.gaExplorer) {
      try { new Explorer(root); } catch (err) {
        var s = root.querySelector(".ga-status");
        if (s) { s.textContent = "the explorer failed to start: " + err; s.classList.add("ga-error"); }
      }
    }
  });
})();
