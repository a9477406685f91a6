// Source page: selecting text in the lesson offers "Add an edge with this quote". The server
// finds the selection in the revision's own text (rendering hides Markdown's marks), so
// what is sent is the selected text and a little of what precedes it, to tell repeats apart.
(function () {
  "use strict";
  var article = document.getElementById("source-text");
  var button = document.getElementById("quote-add");
  var picked = document.getElementById("quote-picked");
  var before = document.getElementById("quote-before");
  if (!article || !button || !picked || !before) return;

  function update() {
    var selection = window.getSelection();
    var text = selection ? selection.toString() : "";
    var inside = selection && selection.rangeCount && article.contains(selection.getRangeAt(0).commonAncestorContainer);
    if (!inside || !text.trim()) {
      button.disabled = true;
      return;
    }
    var range = selection.getRangeAt(0);
    var head = document.createRange();
    head.selectNodeContents(article);
    head.setEnd(range.startContainer, range.startOffset);
    picked.value = text.slice(0, 2000);
    before.value = head.toString().slice(-200);
    button.disabled = false;
    button.textContent = "Add an edge with “" + (text.length > 40 ? text.trim().slice(0, 40) + "…" : text.trim()) + "”";
  }
  document.addEventListener("selectionchange", update);
})();

// Places in the text: #q-START is the quote starting at that offset, #s-START a section,
// #page-N a page. The browser scrolls to an id by itself; this also focuses the quote and
// outlines every piece of it, and finds a quote or heading whose id went to a piece
// another highlight wins (its key is still in the pieces' data-spans).
(function () {
  "use strict";
  var article = document.getElementById("source-text");
  if (!article) return;
  var list = document.getElementById("source-proposals");
  var PLACE = /^#(?:(q|s)-(\d+)|page-(\d+))$/;

  function piecesOf(start) {
    var found = [];
    if (!list) return found;
    list.querySelectorAll('li[data-start="' + start + '"]').forEach(function (item) {
      article.querySelectorAll('[data-spans~="' + item.id.slice(1) + '"]').forEach(function (el) {
        if (found.indexOf(el) === -1) found.push(el);
      });
    });
    return found;
  }

  function jump(hash) {
    var match = PLACE.exec(hash || "");
    if (!match) return;
    article.querySelectorAll(".is-target").forEach(function (el) { el.classList.remove("is-target"); });
    var id = hash.slice(1);
    var target = document.getElementById(id);
    if (match[1] === "q") {
      var pieces = piecesOf(match[2]);
      // In Markdown the id is on an empty anchor just before the quote: focus the quote.
      if (!target || target.classList.contains("anchor")) target = pieces[0] || target;
      if (!target) return;
      pieces.forEach(function (el) { el.classList.add("is-target"); });
      target.classList.add("is-target");
      if (target.tabIndex < 0 && !target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
      target.focus({ preventScroll: true });
      target.scrollIntoView({ block: "center" });
    } else if (!target && match[1] === "s") {
      target = article.querySelector('[data-spans~="' + id + '"]');
      if (target) target.scrollIntoView({ block: "start" });
    }
  }

  window.addEventListener("hashchange", function () { jump(location.hash); });
  // A second click on the same link changes no hash; jump anyway.
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest('a[href^="#"]');
    if (link && link.getAttribute("href") === location.hash) jump(location.hash);
  });
  if (location.hash) {
    jump(location.hash);
    // The browser's own scroll to the fragment may come after this script: centre again.
    window.addEventListener("load", function () { jump(location.hash); });
  }

  // The outline is open beside the text on a wide screen, folded above it on a narrow one.
  var outline = document.getElementById("outline");
  if (outline && window.matchMedia("(min-width: 1101px)").matches) outline.open = true;

  // "Go to page" without a round trip (the form's GET does the same through a redirect).
  var pageJump = document.getElementById("page-jump");
  if (pageJump) {
    pageJump.addEventListener("submit", function (event) {
      var field = pageJump.querySelector("input[name=page]");
      var last = parseInt(field.max, 10);
      var number = Math.min(Math.max(parseInt(field.value, 10) || 1, 1), last);
      event.preventDefault();
      var hash = "#page-" + number;
      if (location.hash === hash) {
        document.getElementById("page-" + number).scrollIntoView({ block: "start" });
      } else {
        location.hash = hash;
      }
    });
  }
})();
