// modkind dashboard: swaps the fragments the server pushes over Server-Sent Events. Each event's
// first data line is the id of the element to replace, the rest its new inner HTML, rendered and
// escaped by the server's templates. No eval, no inline script: the page's CSP forbids both.
"use strict";
(function () {
  if (!window.EventSource) {
    return;
  }
  // A page names where its updates come from (data-events); the Fleet page's follow its filter.
  var events = document.body.getAttribute("data-events") || "/events" + window.location.search;
  var source = new EventSource(events);
  source.addEventListener("swap", function (e) {
    var cut = e.data.indexOf("\n");
    var id = cut < 0 ? e.data : e.data.slice(0, cut);
    var el = document.getElementById(id);
    if (el) {
      el.innerHTML = cut < 0 ? "" : e.data.slice(cut + 1);
      document.body.setAttribute("data-updated", String(Date.now()));
    }
  });
})();
