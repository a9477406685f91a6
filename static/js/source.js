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
