// The web table's page: a lobby to deal a new table or open a replay, then the table. The
// person picks one of their cards (and, with exact-card asks, a suit), then the player to
// ask; the server answers with what this seat may see. CPU moves are played one at a time
// at the chosen speed; watching, any seat's eyes or every hand face up may be shown.
"use strict";

(() => {
  const T = GoFishTable;
  const $ = id => document.getElementById(id);
  const state = {
    id: null, token: null, payload: null, view: null,
    selected: null, suit: null, paused: false, timer: null, busy: false,
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
    const response = await fetch(url, options);
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
    if ($("seed").value !== "") body.seed = Number($("seed").value);
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
    Object.assign(state, {id, token, payload: null, view: null, selected: null, suit: null, paused: false});
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
      button.title = {C: "clubs", D: "diamonds", H: "hearts", S: "spades"}[suit];
      button.append(T.suitSvg(suit));
      if (state.suit === suit) button.classList.add("primary");
      button.addEventListener("click", () => { state.suit = suit; draw(); hint(); });
      row.append(button);
    }
    return row;
  }

  function draw() {
    const payload = state.payload;
    const playing = payload.human !== null;
    const ask = wanted();
    const legal = new Set(payload.legal.filter(([, name]) => name === ask).map(([target]) => target));
    const choosingSuit = playing && state.selected && payload.ask_for === "card" && T.rankOf(state.selected) !== "JK";
    T.render($("table"), payload.scene, playing ? {
      onCard: pick, onSeat: askSeat, selected: state.selected, legalTargets: legal,
      extra: choosingSuit ? suitPicker() : null,
    } : {});
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
    say("message", `Now click the player to ask for ${name}.`);
  }

  function show(payload) {
    const first = state.payload === null;
    state.payload = payload;
    if (first && payload.human === null) {
      const views = $("view");
      views.replaceChildren();
      option(views, "table", "every hand face up");
      payload.labels.forEach((name, seat) => option(views, seat, `seat ${seat}'s eyes (${name})`));
      views.value = String(payload.view);
    }
    if (payload.waiting !== "you") state.selected = state.suit = null;
    draw();
    if (payload.over) say("message", payload.scene.status);
    else if (payload.waiting === "you") hint();
    schedule();
  }

  function delay() {
    return Number($("speed").value);
  }

  function schedule() {
    clearTimeout(state.timer);
    const payload = state.payload;
    if (!payload || payload.over || payload.waiting !== "cpu" || state.paused) return;
    state.timer = setTimeout(advance, delay());
  }

  async function advance() {
    if (state.busy || !state.id) return;
    state.busy = true;
    const id = state.id;
    const answer = await api("POST", `/api/tables/${id}/advance`, {token: state.token, view: state.view});
    state.busy = false;
    if (id !== state.id) return;
    if (!answer.ok) return say("message", reason(answer.data, answer.status), true);
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
    const answer = await api("POST", `/api/tables/${state.id}/ask`, {token: state.token, target, wanted: ask});
    state.busy = false;
    if (!answer.ok) return say("message", `Not allowed: ${reason(answer.data, answer.status)}`, true);
    state.selected = state.suit = null;
    say("message", "");
    show(answer.data);
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
    $("next").addEventListener("click", () => { clearTimeout(state.timer); if (state.payload.waiting === "cpu") advance(); });
    $("speed").addEventListener("input", () => { speedLabel(); schedule(); });
    speedLabel();
    const params = new URLSearchParams(location.search);
    if (params.get("table")) open(params.get("table"), params.get("token") || "");
    else replays();
  }

  init();
})();
