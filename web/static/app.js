// The web table's page: a lobby to deal a new table or open a replay, then the table. The
// person picks one of their cards (and, with exact-card asks, a suit), then the player to
// ask; the server answers with what this seat may see. CPU moves are played one at a time
// at the chosen speed; watching, any seat's eyes or every hand face up may be shown. The
// cards and seats are buttons, so a turn is played with Tab and Enter too. While the page
// waits for the person (or is paused) it polls the table, so a second tab or window on the
// same table follows the game; an ask from a page behind the table is not sent.
"use strict";

(() => {
  const T = GoFishTable;
  const $ = id => document.getElementById(id);
  const POLL = 1500;  // ms between looks at the table while no CPU move is due here
  const state = {
    id: null, token: null, payload: null, shown: null, view: null,
    selected: null, suit: null, paused: false, timer: null, busy: false, refocus: false,
  };

  // ------------------------------------------------------------------ talking to the server

  function reason(data, status) {
    const detail = data && data.detail;
    if (Array.isArray(detail)) return detail.map(d => `${(d.loc || []).slice(1).join(".")}: ${d.msg}`).join("; ");
    return detail || `the server answered ${status}`;
  }

  async function api(method, url, body) {
    const options = {method, headers: {}};
    if (body !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(url, options);
    } catch (error) {
      const detail = "the server does not answer (is gofish-web still running?)";
      return {ok: false, status: 0, data: {detail}};
    }
    let data = null;
    try { data = await response.json(); } catch (error) { data = null; }
    return {ok: response.ok, status: response.status, data};
  }

  function say(id, text, error = false) {
    const node = $(id);
    node.textContent = text;
    node.classList.toggle("gf-error", error);
    node.dataset.error = error ? "1" : "";
  }

  // ------------------------------------------------------------------ the lobby

  let options = null;

  function option(select, value, text) {
    select.append(new Option(text, value));
  }

  function lobby() {
    const players = Number($("players").value);
    const rules = $("rules");
    for (const item of rules.options) item.disabled = options.presets[item.value] < players;
    if (rules.selectedOptions[0].disabled) rules.value = "table";
    const watch = $("mode").value === "watch";
    $("seat").classList.toggle("gf-hidden", watch);
    $("seat-label").classList.toggle("gf-hidden", watch);
    const seat = $("seat");
    const chosen = Math.min(Number(seat.value || 0), players - 1);
    seat.replaceChildren();
    for (let s = 0; s < players; s++) option(seat, s, `seat ${s}${s === 0 ? " (asks first)" : ""}`);
    seat.value = chosen;
    const seats = $("opponents");
    const before = [...seats.querySelectorAll("select")].map(s => s.value);
    seats.replaceChildren();
    for (let s = 0; s < players; s++) {
      seats.append(T.el("label", "", `Seat ${s}`));
      if (!watch && s === chosen) {
        seats.append(T.el("span", "", "you"));
        continue;
      }
      const select = document.createElement("select");
      select.id = `seat-${s}`;
      for (const level of options.cpus) option(select, level, `${level} CPU`);
      for (const agent of options.agents) option(select, agent.spec, agent.label);
      select.value = before[s] && [...select.options].some(o => o.value === before[s]) ? before[s] : "hard";
      seats.append(select);
    }
  }

  async function deal(event) {
    event.preventDefault();
    const players = Number($("players").value);
    const watch = $("mode").value === "watch";
    const human = Number($("seat").value);
    const seats = [];
    for (let s = 0; s < players; s++) seats.push(!watch && s === human ? "human" : $(`seat-${s}`).value);
    const body = {players, rules: $("rules").value, seats};
    // The seed's digits as typed: a Number would round a seed above 2**53 to another deal.
    if ($("seed").value !== "") body.seed = $("seed").value.trim();
    say("lobby-message", "Dealing...");
    const answer = await api("POST", "/api/tables", body);
    if (!answer.ok) return say("lobby-message", reason(answer.data, answer.status), true);
    say("lobby-message", "");
    open(answer.data.id, answer.data.token);
  }

  async function replays() {
    const answer = await api("GET", "/api/replays");
    const list = $("replay-list");
    list.replaceChildren();
    if (!answer.ok) return;
    if (!answer.data.length && options.replays) list.append(T.el("div", "", "No replays saved yet."));
    for (const item of answer.data) {
      const link = T.el("a", "", item.name);
      link.href = item.url;
      link.target = "_blank";
      list.append(T.el("div"));
      list.lastChild.append(link);
    }
  }

  async function openReplayFile(event) {
    const file = event.target.files[0];
    if (!file) return;
    let data;
    try { data = JSON.parse(await file.text()); } catch (error) {
      return say("replay-message", `${file.name}: not JSON (${error.message})`, true);
    }
    const answer = await api("POST", "/api/replays", data);
    if (!answer.ok) return say("replay-message", `${file.name}: ${reason(answer.data, answer.status)}`, true);
    say("replay-message", "");
    location.href = answer.data.url;
  }

  // ------------------------------------------------------------------ the table

  function open(id, token) {
    Object.assign(state, {id, token, payload: null, shown: null, view: null, selected: null, suit: null, paused: false});
    history.replaceState(null, "", `/?table=${id}&token=${token}`);
    $("lobby").classList.add("gf-hidden");
    $("game").classList.remove("gf-hidden");
    $("pause").textContent = "Pause";
    say("message", "");
    refresh();
  }

  function leave() {
    clearTimeout(state.timer);
    state.id = null;
    history.replaceState(null, "", "/");
    $("game").classList.add("gf-hidden");
    $("lobby").classList.remove("gf-hidden");
    $("log").replaceChildren();
    replays();
  }

  function query() {
    const params = new URLSearchParams({token: state.token});
    if (state.view !== null) params.set("view", state.view);
    return params.toString();
  }

  async function refresh() {
    const answer = await api("GET", `/api/tables/${state.id}?${query()}`);
    if (!answer.ok) return say("message", reason(answer.data, answer.status), true);
    show(answer.data);
  }

  // The table as the server has it now (null when it does not answer), or "gone" when this
  // page has since left the table or changed its view.
  async function current() {
    const id = state.id, view = state.view;
    const answer = await api("GET", `/api/tables/${id}?${query()}`);
    if (id !== state.id || view !== state.view) return "gone";
    return answer;
  }

  // Whether `payload` shows the table other than this page does (older answers do not
  // count: a game only grows).
  function moved(payload) {
    return payload.log.length >= state.payload.log.length && JSON.stringify(payload) !== state.shown;
  }

  // A look at the table while no CPU move is due here: another tab or window may have
  // played. The page is redrawn only when something changed (a pick and the focus stay).
  async function poll(always = false) {
    clearTimeout(state.timer);
    if (!state.id || !state.payload) return;
    if (state.busy || (document.hidden && !always)) return schedule();
    const answer = await current();
    if (answer === "gone" || state.busy) return;
    if (!answer.ok) {
      say("message", reason(answer.data, answer.status), true);
      if (answer.status === 0) schedule();  // the server may come back; a 4xx stays
      return;
    }
    if (moved(answer.data)) show(answer.data);
    else schedule();
  }

  function wake() {
    const payload = state.payload;
    if (document.hidden || !payload || payload.over) return;
    if (!(payload.waiting === "cpu" && !state.paused)) poll(true);
  }

  function wanted() {
    if (!state.selected) return null;
    const rank = T.rankOf(state.selected);
    if (state.payload.ask_for === "rank" || rank === "JK") return rank;
    return state.suit ? rank + state.suit : null;
  }

  function suitPicker() {
    const row = T.el("div", "gf-suits");
    row.id = "suits";
    for (const suit of "CDHS") {
      const button = T.el("button", suit === "H" || suit === "D" ? "gf-red" : "");
      button.type = "button";
      button.dataset.suit = suit;
      button.title = T.SUIT_NAMES[suit];
      button.setAttribute("aria-label", T.SUIT_NAMES[suit]);
      button.setAttribute("aria-pressed", String(state.suit === suit));
      button.append(T.suitSvg(suit));
      if (state.suit === suit) button.classList.add("primary");
      button.addEventListener("click", () => { state.suit = suit; draw(); hint(); });
      row.append(button);
    }
    return row;
  }

  // Which control of the table has the keyboard's focus, as a selector to find it again
  // after the table is drawn anew.
  function focused() {
    const node = document.activeElement;
    if (!node || !$("table").contains(node)) return null;
    for (const key of ["card", "suit", "seat"]) {
      if (node.dataset[key] !== undefined) return `[data-${key}="${node.dataset[key]}"]`;
    }
    return null;
  }

  const CONTROL = 'button:not(:disabled), [tabindex="0"]';

  // Give the focus back to the same control; when it is gone, to the first of the person's
  // cards (now or, at a CPU's turn, once the person's turn comes), unless the focus has
  // been taken elsewhere meanwhile.
  function refocus(key) {
    const table = $("table");
    const same = key && table.querySelector(`:is(${CONTROL})${key}`);
    if (same) return same.focus();
    if (!key && !(state.refocus && document.activeElement === document.body)) return;
    const first = table.querySelector(`.gf-me :is(${CONTROL})`);
    if (first) first.focus();
    state.refocus = !first;
  }

  function draw() {
    const payload = state.payload;
    const playing = payload.human !== null;
    const turn = playing && payload.waiting === "you";
    const ask = wanted();
    const legal = new Set(payload.legal.filter(([, name]) => name === ask).map(([target]) => target));
    const choosingSuit = turn && state.selected && payload.ask_for === "card" && T.rankOf(state.selected) !== "JK";
    const key = focused();
    T.render($("table"), payload.scene, playing ? {
      onCard: turn ? pick : null, onSeat: askSeat, selected: state.selected, legalTargets: legal,
      labels: payload.labels, extra: choosingSuit ? suitPicker() : null,
    } : {});
    refocus(key);
    const log = $("log");
    log.replaceChildren(...payload.log.map(T.logLine));
    log.scrollTop = log.scrollHeight;
    const links = $("links");
    links.replaceChildren();
    if (payload.over) {
      const page = T.el("a", "", "Replay this game");
      page.href = `/tables/${state.id}/replay.html?token=${state.token}`;
      page.target = "_blank";
      const file = T.el("a", "", "download the replay");
      file.href = `/api/tables/${state.id}/replay?token=${state.token}`;
      links.append(page, " or ", file);
      if (payload.save_error) links.append(T.el("div", "gf-message gf-error", `Not saved on the server: ${payload.save_error}`));
    }
    $("view-box").classList.toggle("gf-hidden", playing);
    $("pause").disabled = $("next").disabled = payload.over;
  }

  function hint() {
    const payload = state.payload;
    if (payload.over || payload.waiting !== "you") return;
    if (!state.selected) return say("message", "Your turn: pick one of your cards, then the player to ask for its rank.");
    const ask = wanted();
    if (!ask) return say("message", "Now pick the suit of the card to ask for.");
    const name = payload.ask_for === "rank" ? `${ask}s` : `the ${ask}`;
    say("message", `Now pick the player to ask for ${name}.`);
  }

  function show(payload) {
    const first = state.payload === null;
    state.payload = payload;
    state.shown = JSON.stringify(payload);
    if (first && payload.human === null) {
      const views = $("view");
      views.replaceChildren();
      option(views, "table", "every hand face up");
      payload.labels.forEach((name, seat) => option(views, seat, `seat ${seat}'s eyes (${name})`));
      views.value = String(payload.view);
    }
    const mine = payload.scene.seats[payload.scene.viewer];
    const held = state.selected && mine && (mine.cards || []).includes(state.selected);
    if (payload.waiting !== "you" || !held) state.selected = state.suit = null;
    draw();
    if (payload.over) say("message", payload.scene.status);
    else if (payload.waiting === "you") hint();
    schedule();
  }

  function delay() {
    return Number($("speed").value);
  }

  // The next CPU move when one is due (and not paused); else the next look at the table.
  function schedule() {
    clearTimeout(state.timer);
    const payload = state.payload;
    if (!payload || payload.over) return;
    if (payload.waiting === "cpu" && !state.paused) state.timer = setTimeout(advance, delay());
    else state.timer = setTimeout(poll, POLL);
  }

  async function advance() {
    if (state.busy || !state.id) return;
    state.busy = true;
    const id = state.id;
    const answer = await api("POST", `/api/tables/${id}/advance`, {token: state.token, view: state.view});
    state.busy = false;
    if (id !== state.id) return;
    if (answer.status === 409) return poll(true);  // another tab or window played the move
    if (!answer.ok) {
      say("message", reason(answer.data, answer.status), true);
      return schedule();
    }
    show(answer.data);
  }

  function pick(card) {
    state.selected = card;
    state.suit = null;
    say("message", "");
    draw();
    hint();
  }

  async function askSeat(target) {
    const ask = wanted();
    if (!ask) {
      const what = state.selected ? "the suit of the card to ask for" : "one of your cards (the rank to ask for)";
      return say("message", `Pick ${what} first.`, true);
    }
    if (state.busy) return;
    state.busy = true;
    const id = state.id;
    try {
      // `seen`: the server refuses the ask (409) if another tab or window on the table has
      // played since this page last showed it.
      const seen = state.payload.log.length;
      const answer = await api("POST", `/api/tables/${id}/ask`, {token: state.token, target, wanted: ask, seen});
      if (id !== state.id) return;
      if (!answer.ok) {
        // The server refuses an ask out of turn, against the rules or from a page behind
        // the table (409, its reason): show the table as it is now, then why.
        const again = answer.status === 409 ? await current() : "gone";
        if (id !== state.id) return;
        if (again !== "gone" && again.ok && moved(again.data)) show(again.data);
        return say("message", `Not allowed: ${reason(answer.data, answer.status)}`, true);
      }
      state.selected = state.suit = null;
      say("message", "");
      show(answer.data);
    } finally {
      state.busy = false;
    }
  }

  function speedLabel() {
    $("speed-label").textContent = `${(delay() / 1000).toFixed(1)} s a move`;
  }

  // ------------------------------------------------------------------ start

  async function init() {
    const answer = await api("GET", "/api/options");
    options = answer.data;
    for (let n = 2; n <= 6; n++) option($("players"), n, `${n} players`);
    $("players").value = 4;
    for (const name of Object.keys(options.presets)) option($("rules"), name, name);
    lobby();
    for (const id of ["players", "mode", "seat"]) $(id).addEventListener("change", lobby);
    $("new-game").addEventListener("submit", deal);
    $("replay-file").addEventListener("change", openReplayFile);
    $("leave").addEventListener("click", leave);
    $("view").addEventListener("change", () => { state.view = $("view").value; refresh(); });
    $("pause").addEventListener("click", () => {
      state.paused = !state.paused;
      $("pause").textContent = state.paused ? "Resume" : "Pause";
      schedule();
    });
    $("next").addEventListener("click", () => {
      if (state.payload.waiting !== "cpu") return;
      clearTimeout(state.timer);
      advance();
    });
    $("speed").addEventListener("input", () => { speedLabel(); schedule(); });
    // Back to this tab or window: look at once whether the game moved on meanwhile.
    document.addEventListener("visibilitychange", wake);
    window.addEventListener("focus", wake);
    speedLabel();
    const params = new URLSearchParams(location.search);
    if (params.get("table")) open(params.get("table"), params.get("token") || "");
    else replays();
  }

  init();
})();
