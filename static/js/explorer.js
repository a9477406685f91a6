// The explorer: a concept's neighbourhood drawn with cytoscape from the read API.
//
// The page is a shell; every fact comes from /api/v1/ with the session cookie. Text from
// the API is untrusted: the DOM is built with textContent only, and cytoscape draws
// labels on a canvas. The address holds the whole view (centre, depth, direction,
// relations, layout, labels, as_of, open edge), so it can be shared and back/forward work.
(function () {
  "use strict";

  var root = document.getElementById("explorer");
  if (!root) return;
  var config = JSON.parse(document.getElementById("explorer-config").textContent);
  var SLIDER_MAX = 1000;
  var DEFAULTS = { depth: 2, direction: "both", layout: "rings", labels: false };
  var DIRECTIONS = ["both", "out", "in"];
  var LAYOUTS = ["rings", "tree", "force"];
  var RELS = {};
  config.relations.forEach(function (r) { RELS[r.key] = r; });
  var ALL_KEYS = config.relations.map(function (r) { return r.key; });
  // Concept types: each with its colour and parent; a type's family is it and every type
  // below it (a subtype is a kind of its parent).
  var TYPES = {};
  (config.types || []).forEach(function (t) { TYPES[t.key] = t; });
  var TYPED = (config.types || []).length > 0;
  var UNTYPED = config.untypedColour || "#64748b";
  function typeFamily(key) {
    var family = {};
    if (!TYPES[key]) return family;
    family[key] = true;
    var grew = true;
    while (grew) {
      grew = false;
      Object.keys(TYPES).forEach(function (k) {
        var parent = TYPES[k].parent;
        if (!family[k] && parent && family[parent]) { family[k] = true; grew = true; }
      });
    }
    return family;
  }
  function typeLabel(key) { return key ? (TYPES[key] ? TYPES[key].label : key) : "untyped"; }
  function typeColour(key) { return key && TYPES[key] ? TYPES[key].colour : UNTYPED; }
  var pageNow = new Date();
  var firstAt = config.firstEdgeAt ? new Date(config.firstEdgeAt) : null;
  var timeSpan = firstAt ? pageNow.getTime() - firstAt.getTime() : 0;

  var $ = function (id) { return document.getElementById(id); };
  var els = {
    name: $("ex-centre-name"), conceptLink: $("ex-concept-link"), search: $("ex-q"),
    suggest: $("ex-suggest"), form: $("ex-controls"), depth: $("ex-depth"),
    direction: $("ex-direction"), layout: $("ex-layout"), labels: $("ex-labels"),
    fit: $("ex-fit"), relations: $("ex-relations"), status: $("ex-status"), type: $("ex-type"),
    canvas: $("ex-canvas"), start: $("ex-start"), time: $("ex-time"),
    timeWords: $("ex-time-words"), changes: $("ex-changes"), panel: $("ex-panel"),
    panelBody: $("ex-panel-body"),
  };
  var relationBoxes = Array.prototype.slice.call(els.relations.querySelectorAll("input[name=relation]"));
  // Each relation's swatch takes its colour from the config here, not from a style
  // attribute, which the Content-Security-Policy would refuse.
  relationBoxes.forEach(function (box) {
    var swatch = box.parentNode.querySelector(".ex-swatch");
    if (swatch && RELS[box.value]) swatch.style.setProperty("--c", RELS[box.value].colour);
  });

  // --- Small helpers --------------------------------------------------------------------

  // Build an element; children are nodes or strings (strings become text, never markup).
  function h(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      var value = attrs[key];
      if (value === null || value === undefined || value === false) return;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key === "style") Object.keys(value).forEach(function (p) { node.style.setProperty(p, value[p]); });
      else if (key.slice(0, 2) === "on") node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    });
    (children || []).forEach(function (child) {
      if (child === null || child === undefined || child === false) return;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  function debounce(fn, ms) {
    var timer;
    return function () {
      var args = arguments;
      clearTimeout(timer);
      timer = setTimeout(function () { fn.apply(null, args); }, ms);
    };
  }

  function url(template, values) {
    return template.replace(/\{(\w+)\}/g, function (_, key) { return encodeURIComponent(values[key]); });
  }

  var dateWords = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  var relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

  function when(value) {
    return value ? dateWords.format(new Date(value)) : "";
  }

  function ago(date) {
    var seconds = (date.getTime() - Date.now()) / 1000;
    var units = [["year", 31536000], ["month", 2592000], ["week", 604800], ["day", 86400],
      ["hour", 3600], ["minute", 60]];
    for (var i = 0; i < units.length; i++) {
      if (Math.abs(seconds) >= units[i][1]) return relative.format(Math.round(seconds / units[i][1]), units[i][0]);
    }
    return "just now";
  }

  function plural(n, one, many) { return n + " " + (n === 1 ? one : many || one + "s"); }

  function relation(key) {
    return RELS[key] || { key: key, label: key, verb: key.replace(/_/g, " "), directed: true, colour: "#475569" };
  }

  // The API's answer, or an Error whose message says what went wrong in words.
  function getJSON(path, signal) {
    return fetch(config.apiBase + path, {
      credentials: "same-origin", headers: { Accept: "application/json" }, signal: signal,
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (response.ok) return body;
        var words = body && typeof body.detail === "string" ? body.detail : "";
        if (response.status === 401) words = "Your session has ended: sign in again to keep exploring.";
        else if (!words) words = "The server answered " + response.status + "; try again, and tell an admin if it repeats.";
        var error = new Error(words);
        error.status = response.status;
        throw error;
      });
    }, function (error) {
      if (error.name === "AbortError") throw error;
      throw new Error("The server did not answer. Check the connection and try again.");
    });
  }

  // --- State in the address -------------------------------------------------------------

  function clampInt(value, low, high, fallback) {
    var n = parseInt(value, 10);
    return isNaN(n) ? fallback : Math.min(high, Math.max(low, n));
  }

  function readState() {
    var match = location.pathname.match(/\/(\d+)\/?$/);
    var q = new URLSearchParams(location.search);
    var id = match ? parseInt(match[1], 10) : null;
    var rels = q.getAll("relation").filter(function (k) { return k; });
    var asOf = q.get("as_of");
    if (asOf && isNaN(new Date(asOf).getTime())) asOf = null;
    var known = config.centre && config.centre.id === id ? config.centre.name : null;
    return {
      centre: id === null ? null : { id: id, name: (state && state.centre && state.centre.id === id && state.centre.name) || known },
      depth: clampInt(q.get("depth"), 1, 3, DEFAULTS.depth),
      direction: DIRECTIONS.indexOf(q.get("direction")) >= 0 ? q.get("direction") : DEFAULTS.direction,
      layout: LAYOUTS.indexOf(q.get("layout")) >= 0 ? q.get("layout") : DEFAULTS.layout,
      labels: q.has("labels") ? q.get("labels") === "1" : DEFAULTS.labels,
      // null: every relation type; a list: only those (possibly none).
      relations: q.has("relation") ? rels.filter(function (k) { return k !== "none"; }) : null,
      asOf: asOf,
      edge: q.get("edge") ? clampInt(q.get("edge"), 1, Number.MAX_SAFE_INTEGER, null) : null,
      limit: clampInt(q.get("limit"), 1, 500, config.nodeLimit),
      // A concept type: only concepts of it or a type below it are drawn (and the centre).
      type: TYPES[q.get("type")] ? q.get("type") : null,
    };
  }

  function addressOf(s) {
    var path = config.urls.explore + (s.centre ? s.centre.id + "/" : "");
    var q = new URLSearchParams();
    if (s.depth !== DEFAULTS.depth) q.set("depth", s.depth);
    if (s.direction !== DEFAULTS.direction) q.set("direction", s.direction);
    if (s.relations) {
      if (s.relations.length) s.relations.forEach(function (k) { q.append("relation", k); });
      else q.set("relation", "none");
    }
    if (s.layout !== DEFAULTS.layout) q.set("layout", s.layout);
    if (s.labels !== DEFAULTS.labels) q.set("labels", s.labels ? "1" : "0");
    if (s.limit !== config.nodeLimit) q.set("limit", s.limit);
    if (s.type) q.set("type", s.type);
    if (s.asOf) q.set("as_of", s.asOf);
    if (s.edge) q.set("edge", s.edge);
    var query = q.toString();
    return path + (query ? "?" + query : "");
  }

  function remember(push) {
    var address = addressOf(state);
    if (address === location.pathname + location.search) return;
    if (push) history.pushState(null, "", address);
    else history.replaceState(null, "", address);
  }

  var state = null;
  state = readState();

  // --- Controls ---------------------------------------------------------------------------

  function syncControls() {
    els.depth.value = String(state.depth);
    els.direction.value = state.direction;
    els.layout.value = state.layout;
    els.labels.checked = state.labels;
    if (els.type) els.type.value = state.type || "";
    relationBoxes.forEach(function (box) {
      box.checked = state.relations === null || state.relations.indexOf(box.value) >= 0;
    });
    syncSlider();
  }

  function chosenRelations() {
    var keys = relationBoxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
    return keys.length === ALL_KEYS.length ? null : keys;
  }

  els.form.addEventListener("submit", function (event) { event.preventDefault(); });
  els.form.addEventListener("change", function (event) {
    var target = event.target;
    if (target === els.labels) {
      state.labels = els.labels.checked;
      remember(false);
      styleLabels();
      return;
    }
    if (els.type && target === els.type) {
      state.type = TYPES[els.type.value] ? els.type.value : null;
      remember(false);
      if (lastData) draw(lastData);
      return;
    }
    if (target === els.layout) {
      state.layout = els.layout.value;
      remember(false);
      if (cy && cy.nodes().length) runLayout();
      return;
    }
    state.depth = clampInt(els.depth.value, 1, 3, DEFAULTS.depth);
    state.direction = els.direction.value;
    state.relations = chosenRelations();
    remember(false);
    load();
  });
  els.fit.addEventListener("click", function () { if (cy) fitView(); });

  // --- Time slider ----------------------------------------------------------------------

  function positionOf(asOf) {
    if (!asOf || !firstAt || timeSpan <= 0) return SLIDER_MAX;
    var t = new Date(asOf).getTime() - firstAt.getTime();
    return Math.max(0, Math.min(SLIDER_MAX - 1, Math.round((t / timeSpan) * SLIDER_MAX)));
  }

  function instantAt(position) {
    if (position >= SLIDER_MAX) return null;
    return new Date(firstAt.getTime() + Math.round((timeSpan * position) / SLIDER_MAX)).toISOString();
  }

  function syncSlider() {
    if (!firstAt || timeSpan <= 0) {
      els.time.disabled = true;
      if (firstAt) els.timeWords.textContent = "Every edge was recorded just now: there is no past to travel to yet.";
      return;
    }
    els.time.value = String(positionOf(state.asOf));
    sayTime();
  }

  function sayTime() {
    if (!firstAt) return;
    if (state.asOf) {
      var at = new Date(state.asOf);
      els.timeWords.textContent = "As of " + dateWords.format(at) + " (" + ago(at) + ")";
      els.timeWords.classList.add("past");
      els.changes.textContent = "What changed since then";
      els.changes.href = config.urls.changes + "?since=" + encodeURIComponent(state.asOf);
    } else {
      els.timeWords.textContent = "Now: the live graph.";
      els.timeWords.classList.remove("past");
      els.changes.textContent = "Changes in the last 7 days";
      els.changes.href = config.urls.changes;
    }
    els.time.setAttribute("aria-valuetext", els.timeWords.textContent);
  }

  var travel = debounce(function () {
    remember(false);
    load();
    if (state.edge) openEdge(state.edge, { keepAddress: true });
  }, 250);

  els.time.addEventListener("input", function () {
    state.asOf = instantAt(parseInt(els.time.value, 10));
    sayTime();
    travel();
  });

  // --- The drawing ------------------------------------------------------------------------

  var cy = null;

  // A label is never drawn below 12 px on screen: when the view zooms out (a phone's fit,
  // say), its font grows as the graph shrinks. The size is a function of the zoom, so the
  // zoom handler in makeGraph asks the style to run it again.
  var LEAST_PX = 12;
  function readable(size) {
    return function (ele) { return Math.max(size, LEAST_PX / ele.cy().zoom()); };
  }
  var NODE_COLOURS = ["#141b2d", "#3b63d1", "#8ea3dc", "#c2cbe4"];

  function makeGraph() {
    cy = window.cytoscape({
      container: els.canvas,
      minZoom: 0.15,
      maxZoom: 3,
      boxSelectionEnabled: false,
      autoungrabify: false,
      style: [
        { selector: "node", style: {
          "background-color": "data(colour)", "border-width": 2, "border-color": "#ffffff",
          width: 22, height: 22, label: "data(label)",
          "font-family": "system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif",
          "font-size": readable(13), color: "#1d2430", "text-valign": "bottom", "text-halign": "center",
          "text-margin-y": 3, "text-wrap": "wrap", "text-max-width": 100,
          "text-background-color": "#ffffff", "text-background-opacity": 0.85,
          "text-background-shape": "round-rectangle", "text-background-padding": 2,
          "min-zoomed-font-size": 5,
        } },
        { selector: "node.centre", style: {
          width: 38, height: 38, "border-width": 4, "border-color": "#9db7ff",
          "font-size": readable(16), "font-weight": 700, "z-index": 10, "text-max-width": 160,
        } },
        { selector: "node.hover", style: { "border-color": "#2f5bd3", "border-width": 3 } },
        { selector: "edge", style: {
          width: 2.5, "line-color": "data(colour)", "target-arrow-color": "data(colour)",
          "target-arrow-shape": "triangle", "arrow-scale": 1.15, "curve-style": "bezier",
          opacity: 0.9, "font-size": readable(12), "font-family": "system-ui, -apple-system, Arial, sans-serif",
          color: "data(colour)", "text-rotation": "autorotate",
          "text-background-color": "#ffffff", "text-background-opacity": 0.9,
          "text-background-padding": 1,
        } },
        { selector: "edge.sym", style: { "target-arrow-shape": "none" } },
        { selector: "edge.labelled", style: { label: "data(label)" } },
        { selector: "edge.hover", style: { width: 4, opacity: 1 } },
        { selector: "edge.picked", style: {
          width: 5, opacity: 1, "z-index": 20, "underlay-color": "#facc15",
          "underlay-opacity": 0.7, "underlay-padding": 6,
        } },
      ],
    });
    var restyle = 0;
    cy.on("zoom", function () {
      if (restyle) return;
      restyle = window.requestAnimationFrame(function () { restyle = 0; cy.style().update(); });
    });
    cy.on("tap", "node", function (event) {
      var node = event.target;
      recentre(node.data("cid"), node.data("name"));
    });
    cy.on("tap", "edge", function (event) { openEdge(event.target.data("eid")); });
    cy.on("mouseover", "node, edge", function (event) {
      event.target.addClass("hover");
      els.canvas.style.cursor = "pointer";
    });
    cy.on("mouseout", "node, edge", function (event) {
      event.target.removeClass("hover");
      els.canvas.style.cursor = "";
    });
    window.kgExplorer.cy = cy;
  }

  function layoutOptions() {
    var centre = cy.nodes(".centre");
    var common = { animate: false, fit: false, padding: 30, nodeDimensionsIncludeLabels: true };
    if (state.layout === "tree") {
      return Object.assign(common, { name: "breadthfirst", roots: centre, directed: false, spacingFactor: 1.15 });
    }
    if (state.layout === "force") {
      return Object.assign(common, { name: "cose", randomize: false, idealEdgeLength: function () { return 110; },
        nodeRepulsion: function () { return 9000; }, numIter: 1500 });
    }
    return Object.assign(common, {
      name: "concentric", minNodeSpacing: 12, avoidOverlap: true,
      // From the left: a ring of two sits left and right, along the wide frame.
      startAngle: Math.PI,
      concentric: function (node) { return 10 - node.data("distance"); },
      levelWidth: function () { return 1; },
    });
  }

  function fitView() {
    cy.fit(undefined, 36);
    // One or two concepts would be blown up to fill the frame; keep them life-size.
    if (cy.zoom() > 1.5) {
      cy.zoom(1.5);
      cy.center();
    }
  }

  // A layout comes out about as tall as wide (rings, force) or flat (a wide tree), while
  // the frame is wider than tall. Reshape it towards the frame's proportions, within
  // limits that keep labels apart, so the drawing can be shown larger.
  function fillFrame() {
    var nodes = cy.nodes();
    if (nodes.length < 3) return;
    var bb = nodes.boundingBox({ includeLabels: false });
    var frame = cy.width() / Math.max(1, cy.height());
    var shape = bb.w / Math.max(1, bb.h);
    var sx = 1;
    var sy = 1;
    if (shape < frame) {
      var wider = Math.sqrt(frame / shape);
      sx = Math.min(1.3, wider);
      sy = Math.max(0.75, 1 / wider);
    } else {
      sy = Math.min(3, shape / frame);
    }
    var cx = bb.x1 + bb.w / 2;
    var cy0 = bb.y1 + bb.h / 2;
    nodes.positions(function (node) {
      var p = node.position();
      return { x: cx + (p.x - cx) * sx, y: cy0 + (p.y - cy0) * sy };
    });
  }

  function runLayout() {
    cy.layout(layoutOptions()).run();
    fillFrame();
    fitView();
  }

  function styleLabels() {
    if (!cy) return;
    if (state.labels) cy.edges().addClass("labelled");
    else cy.edges().removeClass("labelled");
  }

  function say(words, kind) {
    els.status.textContent = words;
    els.status.className = "ex-status" + (kind ? " " + kind : "");
  }

  var overlay = null;
  function overlayWords(words, kind) {
    if (overlay) overlay.remove();
    overlay = null;
    if (!words) return;
    overlay = h("p", { class: "ex-message ex-overlay " + (kind || ""), id: "ex-overlay", role: "alert" }, [words]);
    els.canvas.parentNode.appendChild(overlay);
  }

  function showStart() {
    els.canvas.hidden = true;
    els.start.hidden = false;
    if (cy) cy.elements().remove();
    overlayWords("");
    say("");
    els.name.textContent = "Explore the graph";
    els.conceptLink.hidden = true;
    document.title = "Explorer · kgreview";
    root.dataset.state = "start";
    delete root.dataset.centre;
    overviewPanel(null);
  }

  function showCentreName(name) {
    if (!state.centre) return;
    state.centre.name = name;
    els.name.textContent = name;
    els.conceptLink.hidden = false;
    els.conceptLink.href = url(config.urls.concept, { id: state.centre.id });
    document.title = name + " · Explorer · kgreview";
  }

  var loading = null;
  var lastData = null;

  function neighboursPath() {
    var q = new URLSearchParams();
    q.set("depth", state.depth);
    q.set("direction", state.direction);
    q.set("limit", state.limit);
    (state.relations || []).forEach(function (k) { q.append("relation", k); });
    if (state.asOf) q.set("as_of", state.asOf);
    return "concepts/" + state.centre.id + "/neighbours?" + q.toString();
  }

  function load() {
    if (loading) loading.abort();
    loading = null;
    if (!state.centre) { showStart(); return; }
    els.start.hidden = true;
    els.canvas.hidden = false;
    root.dataset.centre = String(state.centre.id);
    if (!cy) makeGraph();
    if (state.centre.name) showCentreName(state.centre.name);
    if (state.relations && !state.relations.length) {
      cy.elements().remove();
      lastData = null;
      root.dataset.state = "empty";
      root.dataset.centre = String(state.centre.id);
      say("");
      overlayWords("No relation type is ticked: tick at least one under Relations to draw edges.", "warn");
      overviewPanel(null);
      return;
    }
    var controller = new AbortController();
    loading = controller;
    root.dataset.state = "loading";
    say("Loading…");
    getJSON(neighboursPath(), controller.signal).then(function (data) {
      if (loading !== controller) return;
      loading = null;
      draw(data);
    }, function (error) {
      if (error.name === "AbortError" || loading !== controller) return;
      loading = null;
      lastData = null;
      cy.elements().remove();
      root.dataset.state = "error";
      say("");
      overlayWords(error.message, "bad");
      overviewPanel(null);
    });
  }

  function instantWords() {
    return state.asOf ? "as of " + dateWords.format(new Date(state.asOf)) : "now";
  }

  // Rings read best when each concept sits near the one that leads to it: order every
  // ring by the position of a neighbour in the ring inside it (the layout keeps that order).
  function ringOrder(data) {
    var distance = {};
    var links = {};
    data.nodes.forEach(function (n) { distance[n.id] = n.distance; links[n.id] = []; });
    data.edges.forEach(function (e) {
      if (links[e.source.id] && links[e.target.id]) {
        links[e.source.id].push(e.target.id);
        links[e.target.id].push(e.source.id);
      }
    });
    var rings = {};
    data.nodes.forEach(function (n) { (rings[n.distance] = rings[n.distance] || []).push(n.id); });
    var order = {};
    Object.keys(rings).map(Number).sort(function (a, b) { return a - b; }).forEach(function (d) {
      var ring = rings[d].map(function (id, i) {
        var inner = links[id].filter(function (o) { return distance[o] === d - 1 && order[o] !== undefined; })
          .map(function (o) { return order[o]; });
        return { id: id, key: inner.length ? Math.min.apply(null, inner) : Number.MAX_SAFE_INTEGER, i: i };
      });
      ring.sort(function (a, b) { return a.key - b.key || a.i - b.i; });
      ring.forEach(function (r, i) { order[r.id] = i / Math.max(1, ring.length); });
    });
    return order;
  }

  // The answer with only the concepts of the chosen type's family (the centre stays) and
  // the edges among them; the answer itself when no type is chosen.
  function ofType(data) {
    if (!state.type) return data;
    var family = typeFamily(state.type);
    var keep = {};
    var nodes = data.nodes.filter(function (n) {
      var kept = n.id === data.center.id || (n.type && family[n.type]);
      if (kept) keep[n.id] = true;
      return kept;
    });
    keep[data.center.id] = true;
    var edges = data.edges.filter(function (e) { return keep[e.source.id] && keep[e.target.id]; });
    return Object.assign({}, data, { nodes: nodes, edges: edges, hidden: data.nodes.length - nodes.length });
  }

  function nodeColour(n) {
    if (TYPED) return typeColour(n.type);
    return NODE_COLOURS[Math.min(n.distance, NODE_COLOURS.length - 1)];
  }

  function draw(answer) {
    lastData = answer;
    var data = ofType(answer);
    showCentreName(data.center.name);
    var ids = {};
    var order = ringOrder(data);
    var nodes = data.nodes.slice().sort(function (a, b) { return order[a.id] - order[b.id]; }).map(function (n) {
      ids[n.id] = true;
      return {
        group: "nodes",
        // The type is written under the name, so it is never told by colour alone.
        data: { id: "n" + n.id, cid: n.id, name: n.name, distance: n.distance, type: n.type || "",
          label: TYPED && n.type ? n.name + "\n(" + typeLabel(n.type) + ")" : n.name,
          colour: nodeColour(n) },
        classes: (n.distance === 0 ? "centre" : "d" + n.distance) + (TYPED && n.type ? " typed" : ""),
      };
    });
    if (!ids[data.center.id]) {
      nodes.unshift({ group: "nodes", classes: "centre",
        data: { id: "n" + data.center.id, cid: data.center.id, name: data.center.name, label: data.center.name,
          distance: 0, type: "", colour: TYPED ? UNTYPED : NODE_COLOURS[0] } });
    }
    var edges = data.edges.map(function (e) {
      var rel = relation(e.relation);
      return {
        group: "edges",
        data: { id: "e" + e.id, eid: e.id, source: "n" + e.source.id, target: "n" + e.target.id,
          relation: e.relation, colour: rel.colour, label: rel.label },
        classes: (e.symmetric ? "sym" : "dir") + (state.labels ? " labelled" : ""),
      };
    });
    cy.batch(function () {
      cy.elements().remove();
      cy.add(nodes.concat(edges));
    });
    runLayout();
    if (state.edge) cy.$id("e" + state.edge).addClass("picked");

    var name = data.center.name;
    var scope = plural(state.depth, "step") + (state.direction === "out" ? " outgoing" : state.direction === "in" ? " incoming" : "");
    var filtered = "";
    if (state.relations) {
      var left = ALL_KEYS.filter(function (k) { return state.relations.indexOf(k) < 0; });
      var labels = function (keys) { return keys.map(function (k) { return relation(k).label; }).join(", "); };
      filtered = left.length <= state.relations.length && left.length ? " without " + labels(left) : " along " + labels(state.relations);
    }
    if (state.type) {
      filtered += ", only " + typeLabel(state.type) + " and the types below it" +
        (data.hidden ? " (" + plural(data.hidden, "concept") + " of other types left out)" : "");
    }
    root.dataset.centre = String(data.center.id);
    if (!data.edges.length) {
      root.dataset.state = "empty";
      say("");
      overlayWords("No edges within " + scope + " of " + name + filtered + " " + instantWords() +
        (state.asOf ? ". Move the time slider later to see edges recorded since." : "."), "warn");
    } else {
      root.dataset.state = "ready";
      overlayWords("");
      var words = plural(data.nodes.length - 1, "concept") + " and " + plural(data.edges.length, "edge") +
        " within " + scope + " of " + name + filtered + ", " + instantWords() + ".";
      if (data.truncated) {
        say("Only the " + data.nodes.length + " nearest concepts are drawn: more lie within " + scope +
          ". Lower the depth or untick relations to see them all. " + words, "warn");
        root.dataset.truncated = "true";
      } else {
        say(words);
        delete root.dataset.truncated;
      }
    }
    if (!state.edge) overviewPanel(data);
  }

  // --- Re-centring ------------------------------------------------------------------------

  function recentre(id, name) {
    if (state.centre && state.centre.id === id) return;
    state.centre = { id: id, name: name || null };
    state.edge = null;
    remember(true);
    window.scrollTo({ top: 0 });
    load();
  }

  window.addEventListener("popstate", function () {
    state = readState();
    syncControls();
    load();
    if (state.edge) openEdge(state.edge, { keepAddress: true });
    else if (state.centre) overviewPanel(lastData && ofType(lastData));
  });

  // --- The panel --------------------------------------------------------------------------

  function fill(children) {
    els.panelBody.replaceChildren.apply(els.panelBody, children.filter(Boolean));
  }

  function conceptButton(ref) {
    return h("a", { href: url(config.urls.explore + "{id}/", { id: ref.id }), title: "Centre the drawing on " + ref.name,
      onclick: function (event) {
        if (event.metaKey || event.ctrlKey || event.shiftKey) return;
        event.preventDefault();
        recentre(ref.id, ref.name);
      } }, [ref.name]);
  }

  // The legend of a typed graph: each type in the drawing with its colour, and the
  // concepts of each by name (the drawing's colours said in words).
  function typeKey(data) {
    var groups = {};
    var order = [];
    (data ? data.nodes : []).forEach(function (n) {
      var key = n.type || "";
      if (!groups[key]) { groups[key] = []; order.push(key); }
      groups[key].push(n.name);
    });
    order.sort(function (a, b) { return a === "" ? 1 : b === "" ? -1 : typeLabel(a).localeCompare(typeLabel(b)); });
    return h("div", { class: "ex-type-key", id: "ex-type-key" }, [
      h("h3", { text: "Concept types" }),
      h("ul", { class: "ex-type-list" }, order.map(function (key) {
        return h("li", { "data-type": key }, [
          h("span", { class: "ex-dot", style: { background: typeColour(key) } }),
          h("strong", { text: typeLabel(key) }), " (" + groups[key].length + "): ",
          h("span", { class: "small", text: groups[key].slice(0, 12).join(", ") + (groups[key].length > 12 ? ", …" : "") }),
        ]);
      })),
      h("p", { class: "small muted", text: "The larger node is the centre; rings show the steps from it." }),
    ]);
  }

  function overviewPanel(data) {
    if (!state.centre) {
      fill([h("p", { class: "muted" }, ["Choose a concept to draw its neighbourhood. Then click an edge to see why it exists, or a concept to centre on it."])]);
      return;
    }
    var name = (data && data.center.name) || state.centre.name || "";
    var parts = [
      h("h2", { text: name }),
      TYPED ? typeKey(data) : h("div", { class: "ex-node-key" }, [
        h("span", {}, [h("span", { class: "ex-dot", style: { background: NODE_COLOURS[0] } }), "centre"]),
        h("span", {}, [h("span", { class: "ex-dot", style: { background: NODE_COLOURS[1] } }), "1 step"]),
        h("span", {}, [h("span", { class: "ex-dot", style: { background: NODE_COLOURS[2] } }), "2 steps"]),
        h("span", {}, [h("span", { class: "ex-dot", style: { background: NODE_COLOURS[3] } }), "3 steps"]),
      ]),
      h("p", { class: "muted small" }, ["Click an edge (or one below) to see its evidence and the decisions about it. Click a concept to centre on it."]),
    ];
    if (data && data.edges.length) {
      var shown = data.edges.slice(0, 60);
      parts.push(h("h3", { text: "Edges in the drawing" }));
      parts.push(h("ul", { class: "ex-edge-list", id: "ex-edge-list" }, shown.map(function (e) {
        var rel = relation(e.relation);
        return h("li", {}, [h("button", { type: "button", "data-edge": e.id, onclick: function () { openEdge(e.id); } }, [
          e.source.name + " ", h("span", { class: "verb", style: { "--c": rel.colour } }, [rel.verb]), " " + e.target.name,
        ])]);
      })));
      if (data.edges.length > shown.length) parts.push(h("p", { class: "small muted", text: "and " + plural(data.edges.length - shown.length, "more edge") + " in the drawing." }));
    }
    parts.push(h("p", { class: "ex-links" }, [
      h("a", { href: url(config.urls.concept, { id: state.centre.id }) }, ["Concept page"]),
    ]));
    fill(parts);
  }

  var STATE_WORDS = {
    active: ["In the graph", "ok"],
    not_yet: ["Not yet recorded at this instant", "warn"],
    superseded: ["Superseded by a newer row", "status-superseded"],
    invalidated: ["Invalidated", "bad"],
  };

  var edgeLoading = null;

  function openEdge(id, options) {
    options = options || {};
    state.edge = id;
    if (!options.keepAddress) remember(false);
    if (cy) {
      cy.edges(".picked").removeClass("picked");
      cy.$id("e" + id).addClass("picked");
    }
    if (edgeLoading) edgeLoading.abort();
    var controller = new AbortController();
    edgeLoading = controller;
    root.dataset.panel = "loading";
    fill([panelTop(id), h("p", { class: "muted", text: "Loading the evidence…" })]);
    var path = "edges/" + id + (state.asOf ? "?as_of=" + encodeURIComponent(state.asOf) : "");
    getJSON(path, controller.signal).then(function (data) {
      if (edgeLoading !== controller) return;
      edgeLoading = null;
      edgePanel(data);
      root.dataset.panel = "edge";
    }, function (error) {
      if (error.name === "AbortError" || edgeLoading !== controller) return;
      edgeLoading = null;
      root.dataset.panel = "error";
      fill([panelTop(id), h("p", { class: "error", role: "alert", text: error.message })]);
    });
  }

  function closePanel() {
    if (!state.edge) return;
    if (edgeLoading) edgeLoading.abort();
    edgeLoading = null;
    state.edge = null;
    remember(false);
    if (cy) cy.edges(".picked").removeClass("picked");
    delete root.dataset.panel;
    overviewPanel(lastData && ofType(lastData));
  }

  function panelTop(id) {
    return h("div", { class: "ex-panel-top" }, [
      h("span", { class: "small muted", text: "Edge #" + id }),
      h("button", { type: "button", class: "close ghost", title: "Close (Esc)", onclick: closePanel }, ["Close ", h("kbd", { text: "Esc" })]),
    ]);
  }

  function fact(term, value) {
    return [h("dt", { text: term }), h("dd", {}, [value])];
  }

  function edgePanel(data) {
    var edge = data.edge;
    var rel = relation(edge.relation);
    var stateWords = STATE_WORDS[data.state_at] || [data.state_at, ""];
    var facts = [];
    facts.push.apply(facts, fact("Confidence", edge.confidence.toFixed(2)));
    facts.push.apply(facts, fact("Recorded", when(edge.recorded_at) + (edge.decided_by ? " by " + edge.decided_by : "")));
    facts.push.apply(facts, fact("Holds from", when(edge.valid_at)));
    if (edge.invalid_at) {
      facts.push.apply(facts, fact(edge.status === "superseded" ? "Superseded" : "Invalidated",
        when(edge.invalid_at) + (data.invalidated_by ? " by " + data.invalidated_by : "") +
        (data.invalidation_reason ? ": " + data.invalidation_reason : "")));
    }
    var parts = [
      panelTop(edge.id),
      h("p", { class: "ex-claim", id: "ex-claim" }, [
        conceptButton(edge.source), " ",
        h("span", { class: "verb", style: { "--c": rel.colour } }, [rel.verb]), " ",
        conceptButton(edge.target),
      ]),
      h("p", {}, [h("span", { class: "badge " + stateWords[1], id: "ex-edge-state" }, [stateWords[0]]),
        data.as_of ? h("span", { class: "small muted", text: " " + instantWords() }) : null]),
      h("dl", { class: "facts" }, facts),
    ];

    parts.push(h("h3", { text: "Evidence" }));
    var ev = data.evidence;
    if (ev) {
      var source = url(config.urls.source, { slug: ev.source }) + "?rev=" + ev.revision;
      parts.push(h("div", { class: "evidence", id: "ex-evidence" }, [
        h("blockquote", {}, [
          // The API cuts the surrounding text at contextChars: say where it was cut.
          (ev.before.length >= config.contextChars ? "…" : "") + ev.before,
          h("mark", { text: ev.quote }),
          ev.after.replace(/\s+$/, "") + (ev.after.length >= config.contextChars ? "…" : ""),
        ]),
      ]));
      var current;
      if (ev.current_revision === null || ev.current_revision === ev.revision) {
        current = h("span", { class: "badge ok" }, ["This is the current revision"]);
      } else if (ev.in_current_revision) {
        current = h("span", { class: "badge ok" }, ["Still in the current revision (" + ev.current_revision + ")"]);
      } else {
        current = h("span", { class: "badge warn" }, ["Not in the current revision (" + ev.current_revision + "): the text changed"]);
      }
      parts.push(h("p", { class: "small", id: "ex-source" }, [
        "From ", h("a", { href: source }, [ev.source_title || ev.source]), ", revision " + ev.revision + " ", current,
      ]));
    } else {
      parts.push(h("p", { class: "muted small", text: "No evidence was recorded for this edge." }));
    }

    parts.push(h("h3", { text: "Why" }));
    var proposal = data.proposal;
    parts.push(h("p", { id: "ex-reason" }, [edge.reason || (proposal && proposal.reason) || "No reason was given."]));
    if (proposal) {
      var agent = proposal.agent;
      var submitter = proposal.submitter;
      var by = "";
      if (agent) {
        by = " by the " + agent.agent + " agent (" +
          [agent.provider, agent.model, agent.run_id ? "run #" + agent.run_id : ""].filter(Boolean).join(", ") + ")";
      } else if (submitter) {
        by = " by " + submitter.name + (submitter.via === "mcp" ? " via MCP" : " via the API") +
          (submitter.batch ? " (batch #" + submitter.batch + ")" : "");
      }
      parts.push(h("p", { class: "small muted", id: "ex-proposed" }, [
        "Proposed " + when(proposal.created_at) + " with confidence " + proposal.confidence.toFixed(2) + by + ".",
      ]));
      if (proposal.reason && proposal.reason !== edge.reason) {
        parts.push(h("p", { class: "small" }, [(submitter ? "The submitter's reason: " : "The agent's reason: ") + proposal.reason]));
      }
    }

    parts.push(h("h3", { text: "Decisions" }));
    if (data.trail.length) {
      parts.push(h("ol", { class: "ex-trail", id: "ex-trail" }, data.trail.map(function (d) {
        return h("li", {}, [
          h("span", { class: "badge action-" + d.action, text: d.action_label }), " ",
          d.by ? "by " + d.by + " " : "", h("span", { class: "muted small", text: when(d.at) }),
          d.reason_code ? h("span", { class: "small muted", text: " · " + d.reason_code.replace(/_/g, " ") }) : null,
          d.note ? h("span", { class: "note", text: d.note }) : null,
        ]);
      })));
    } else {
      parts.push(h("p", { class: "muted small", text: "No review decision is recorded: the edge was written directly (an import or a service)." }));
    }

    var links = [
      h("a", { href: url(config.urls.edge, { id: edge.id }) }, ["Edge history"]),
      h("a", { href: url(config.urls.concept, { id: edge.source.id }) }, ["Concept page: " + edge.source.name]),
      h("a", { href: url(config.urls.concept, { id: edge.target.id }) }, ["Concept page: " + edge.target.name]),
    ];
    if (data.supersedes) links.push(h("button", { type: "button", class: "link", onclick: function () { openEdge(data.supersedes); } }, ["The row it replaced (#" + data.supersedes + ")"]));
    if (data.superseded_by) links.push(h("button", { type: "button", class: "link", onclick: function () { openEdge(data.superseded_by); } }, ["The row that replaced it (#" + data.superseded_by + ")"]));
    parts.push(h("p", { class: "ex-links" }, links));
    fill(parts);
  }

  // --- Search -------------------------------------------------------------------------------

  var hits = [];
  var active = -1;
  var searching = null;

  function closeSuggest() {
    hits = [];
    active = -1;
    els.suggest.hidden = true;
    els.suggest.replaceChildren();
    els.search.setAttribute("aria-expanded", "false");
    els.search.removeAttribute("aria-activedescendant");
  }

  function note(words) {
    els.suggest.replaceChildren(h("li", { class: "note", role: "presentation", text: words }));
    els.suggest.hidden = false;
    els.search.setAttribute("aria-expanded", "true");
  }

  function showHits(list, q) {
    hits = list;
    active = list.length ? 0 : -1;
    if (!list.length) { note("No concept matches “" + q + "”."); return; }
    els.suggest.replaceChildren.apply(els.suggest, list.map(function (hit, i) {
      var via = hit.matched_name && hit.matched_name !== hit.concept.name ? h("span", { class: "via", text: "as “" + hit.matched_name + "”" }) : null;
      var status = hit.status !== "active" ? h("span", { class: "via", text: "(" + hit.status + ")" }) : null;
      return h("li", { id: "ex-opt-" + i, role: "option", "aria-selected": i === active ? "true" : "false",
        onmousedown: function (event) { event.preventDefault(); choose(i); } }, [hit.concept.name, via, status]);
    }));
    els.suggest.hidden = false;
    els.search.setAttribute("aria-expanded", "true");
    mark();
  }

  function mark() {
    Array.prototype.forEach.call(els.suggest.children, function (li, i) {
      li.setAttribute("aria-selected", i === active ? "true" : "false");
      if (i === active) li.scrollIntoView({ block: "nearest" });
    });
    if (active >= 0) els.search.setAttribute("aria-activedescendant", "ex-opt-" + active);
    else els.search.removeAttribute("aria-activedescendant");
  }

  function choose(i) {
    var hit = hits[i];
    if (!hit) return;
    closeSuggest();
    els.search.value = "";
    els.search.blur();
    recentre(hit.concept.id, hit.concept.name);
  }

  var lookUp = debounce(function () {
    var q = els.search.value.trim();
    if (searching) searching.abort();
    if (!q) { closeSuggest(); return; }
    var controller = new AbortController();
    searching = controller;
    getJSON("concepts?limit=8&q=" + encodeURIComponent(q), controller.signal).then(function (body) {
      if (searching !== controller) return;
      showHits(body.results, q);
    }, function (error) {
      if (error.name === "AbortError" || searching !== controller) return;
      hits = [];
      note("Search failed: " + error.message);
    });
  }, 200);

  els.search.addEventListener("input", lookUp);
  els.search.addEventListener("keydown", function (event) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (!hits.length) return;
      event.preventDefault();
      var step = event.key === "ArrowDown" ? 1 : -1;
      active = (active + step + hits.length) % hits.length;
      mark();
    } else if (event.key === "Enter") {
      event.preventDefault();
      if (hits.length) choose(active >= 0 ? active : 0);
    } else if (event.key === "Escape") {
      if (!els.suggest.hidden) {
        event.stopPropagation();
        closeSuggest();
      }
    }
  });
  els.search.addEventListener("blur", function () { setTimeout(closeSuggest, 150); });

  // --- Keys ---------------------------------------------------------------------------------

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var typing = target && (target.isContentEditable || /^(TEXTAREA|SELECT)$/.test(target.tagName) ||
      (target.tagName === "INPUT" && !/^(range|checkbox|radio|button|submit)$/.test(target.type)));
    if (event.key === "/" && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
      event.preventDefault();
      els.search.focus();
      els.search.select();
    } else if (event.key === "Escape" && state.edge) {
      if (target === els.search && !els.suggest.hidden) return;
      closePanel();
    }
  });

  // Starting points on the empty explorer re-centre in place, like a search hit.
  els.start.addEventListener("click", function (event) {
    var link = event.target.closest("a[data-concept]");
    if (!link || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    recentre(parseInt(link.dataset.concept, 10), link.textContent);
  });

  // --- Start ----------------------------------------------------------------------------------

  window.kgExplorer = { cy: null, state: function () { return state; }, reload: load };
  syncControls();
  load();
  if (state.edge && state.centre) openEdge(state.edge, { keepAddress: true });
})();
