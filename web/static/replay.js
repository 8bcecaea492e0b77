// The replay viewer: steps through a game forward and back, from any seat's eyes or with
// every hand face up, with the event log beside the table. Its data is the page's
// #gofish-replay-data (gofish_web.replay_page.page_data).
"use strict";

const GoFishReplay = (() => {
  const T = GoFishTable;

  function start(root) {
    const data = JSON.parse(document.getElementById("gofish-replay-data").textContent);
    const $ = id => root.querySelector(`#${id}`);
    const last = data.steps.length - 1;
    let step = 0;
    let view = "table";
    let timer = null;

    $("heading").textContent = data.heading;
    const about = $("about");
    for (const line of data.about) about.append(T.el("div", "", line));
    const views = $("view");
    views.append(new Option("Every hand face up", "table"));
    data.labels.forEach((name, seat) => views.append(new Option(`Seat ${seat}'s eyes${name ? ` (${name})` : ""}`, String(seat))));
    $("step").max = last;

    const hash = new URLSearchParams(location.hash.slice(1));
    if (hash.has("step")) step = Math.max(0, Math.min(last, Math.trunc(Number(hash.get("step"))) || 0));
    if (hash.has("view") && [...views.options].some(o => o.value === hash.get("view"))) view = hash.get("view");
    views.value = view;

    function note(entry) {
      if (entry.cards === undefined) return undefined;
      if (view === "table") return `seat ${entry.seat} drew ${entry.cards.join(" ")}`;
      if (Number(view) === entry.seat) return `you drew ${entry.cards.join(" ")}`;
      return undefined;
    }

    function show() {
      const scene = data.steps[step].scene;
      T.render($("table"), view === "table" ? scene : T.seatView(scene, Number(view)));
      const end = data.steps[step].log_end;
      const begin = step ? data.steps[step - 1].log_end : 0;
      const log = $("log");
      const lines = data.log.map((entry, index) => {
        const line = T.logLine({...entry, note: note(entry)});
        line.dataset.step = entry.step;
        if (index >= end) line.classList.add("gf-future");
        else if (index >= begin) line.classList.add("gf-current");
        return line;
      });
      log.replaceChildren(...lines);
      // Keep the current ask in the middle of the log (the page itself does not scroll).
      const current = log.querySelector(".gf-current");
      if (current) log.scrollTop = Math.max(0, current.offsetTop - log.clientHeight / 2);
      $("step").value = step;
      $("step-label").textContent = step === 0 ? `The deal (${last} asks)` : `Ask ${step} of ${last}`;
      $("step-label").dataset.step = step;
      $("first").disabled = $("back").disabled = step === 0;
      $("forward").disabled = $("last").disabled = step === last;
      history.replaceState(null, "", `#step=${step}&view=${view}`);
    }

    function go(to) {
      step = Math.max(0, Math.min(last, to));
      if (step === last) stop();
      show();
    }

    function stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      $("play").textContent = "Play";
    }

    function play() {
      if (timer !== null) return stop();
      if (step === last) step = 0;
      $("play").textContent = "Pause";
      timer = setInterval(() => go(step + 1), 900);
    }

    $("first").addEventListener("click", () => go(0));
    $("back").addEventListener("click", () => go(step - 1));
    $("forward").addEventListener("click", () => go(step + 1));
    $("last").addEventListener("click", () => go(last));
    $("play").addEventListener("click", play);
    $("step").addEventListener("input", event => go(Number(event.target.value)));
    views.addEventListener("change", () => { view = views.value; show(); });
    document.addEventListener("keydown", event => {
      if (event.target.tagName === "INPUT" || event.target.tagName === "SELECT") return;
      const keys = {ArrowLeft: () => go(step - 1), ArrowRight: () => go(step + 1), Home: () => go(0), End: () => go(last), " ": play};
      if (keys[event.key]) { event.preventDefault(); keys[event.key](); }
    });
    show();
  }

  return {start};
})();

GoFishReplay.start(document);
