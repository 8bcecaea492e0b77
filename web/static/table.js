// Draws a Go Fish table from a scene (gofish_env.scene.Scene as JSON): the seats around the
// felt, card backs with counts for hidden hands, the viewer's cards face up, catches, the
// pool, and the last ask with its answer. Shared by the web table and the replay pages.
// At the web table the person's cards and the seats they may ask are controls: buttons
// (role "button", Enter or Space) with names, reached by Tab in the order of a turn.
"use strict";

const GoFishTable = (() => {
  // Suit symbols as shapes, so no font is needed for them.
  const SUITS = {
    C: '<svg viewBox="0 0 100 100"><circle cx="50" cy="27" r="21"/><circle cx="27" cy="58" r="21"/>' +
       '<circle cx="73" cy="58" r="21"/><circle cx="50" cy="50" r="13"/><path d="M50 50 L70 99 L30 99 Z"/></svg>',
    D: '<svg viewBox="0 0 100 100"><path d="M50 1 L88 50 L50 99 L12 50 Z"/></svg>',
    H: '<svg viewBox="0 0 100 100"><circle cx="28" cy="33" r="24"/><circle cx="72" cy="33" r="24"/>' +
       '<path d="M5 42 L95 42 L50 99 Z"/></svg>',
    S: '<svg viewBox="0 0 100 100"><path d="M50 1 L95 58 L5 58 Z"/><circle cx="28" cy="60" r="23"/>' +
       '<circle cx="72" cy="60" r="23"/><path d="M50 60 L72 99 L28 99 Z"/></svg>',
  };
  const SUIT_NAMES = {C: "clubs", D: "diamonds", H: "hearts", S: "spades"};
  const RANK_WORDS = {J: "jack", Q: "queen", K: "king", A: "ace"};
  const CENTER = [50, 44.53];  // percent of the table: (480, 285) of 960 x 640
  const RADII = [36.67, 30.0];

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function suitSvg(suit) {
    const span = el("span");
    span.innerHTML = SUITS[suit];  // a constant of this file, never page data
    return span.firstChild;
  }

  // "7 of hearts", "queen of spades", "joker": a card's name for a screen reader.
  function cardName(name) {
    if (name === "JK") return "joker";
    const rank = name.slice(0, -1);
    return `${RANK_WORDS[rank] || rank} of ${SUIT_NAMES[name.slice(-1)]}`;
  }

  // A face-up card: a <div>, or a <button> (tag) for one the person may pick.
  function card(name, tag) {
    const node = el(tag || "div", "gf-card");
    node.dataset.card = name;
    if (name === "JK") {
      node.classList.add("gf-joker");
      node.append(el("span", "gf-rank", "JK"));
      return node;
    }
    const suit = name.slice(-1);
    if (suit === "H" || suit === "D") node.classList.add("gf-red");
    node.append(el("span", "gf-rank", name.slice(0, -1)));
    const corner = suitSvg(suit);
    corner.classList.add("gf-corner");
    const pip = suitSvg(suit);
    pip.classList.add("gf-pip");
    node.append(corner, pip);
    return node;
  }

  function back() {
    const node = el("div", "gf-card gf-back");
    node.dataset.back = "1";
    return node;
  }

  // Overlap cards of `width` (cqw) so that n of them fit in `room` (cqw).
  function fan(hand, cards, width, room, widest) {
    const step = cards.length > 1 ? Math.min(widest, (room - width) / (cards.length - 1)) : widest;
    hand.style.setProperty("--overlap", `${(step - width).toFixed(2)}cqw`);
    hand.append(...cards);
  }

  function rankOf(name) {
    return name === "JK" ? "JK" : name.slice(0, -1);
  }

  function catches(seat) {
    const row = el("div", "gf-catches");
    if (seat.catches.length === 0) row.append(el("span", "", "no catches"));
    for (const rank of seat.catches) row.append(el("span", "gf-chip", rank));
    row.append(el("span", "gf-points", `${seat.points} pts`));
    return row;
  }

  function label(seat, tag) {
    const row = el("div", "gf-label");
    row.append(el("span", "gf-name", seat.label + (seat.out ? " (out)" : "")));
    if (tag) row.append(el("span", "gf-tag", tag));
    return row;
  }

  function marks(node, seat) {
    node.dataset.seat = seat.seat;
    if (seat.to_move) node.classList.add("gf-to-move");
    if (seat.winner) node.classList.add("gf-winner");
    if (seat.out) node.classList.add("gf-out");
  }

  // Where each seat sits: `bottom` at the bottom, then going left (seat + 1) clockwise.
  function positions(players, bottom) {
    const places = {};
    for (let k = 0; k < players; k++) {
      const angle = Math.PI / 2 + (2 * Math.PI * k) / players;
      places[(bottom + k) % players] = [
        CENTER[0] + RADII[0] * Math.cos(angle),
        CENTER[1] + RADII[1] * Math.sin(angle),
      ];
    }
    return places;
  }

  function seatPanel(seat, place, options) {
    const node = el("div", "gf-seat");
    marks(node, seat);
    node.style.left = `${place[0]}%`;
    node.style.top = `${place[1]}%`;
    node.append(label(seat, seat.winner ? "WINNER" : seat.to_move ? "to ask" : ""));
    const hand = el("div", "gf-hand");
    if (seat.cards === null) {
      const backs = [];
      for (let i = 0; i < Math.min(seat.hand_size, 12); i++) backs.push(back());
      fan(hand, backs, 3.55, 11, 1.25);
      const count = el("span", "gf-count", `${seat.hand_size} card${seat.hand_size === 1 ? "" : "s"}`);
      count.dataset.count = seat.hand_size;
      hand.append(count);
    } else if (seat.cards.length) {
      fan(hand, seat.cards.map(name => card(name)), 3.55, 20, 3.85);
    } else {
      hand.append(el("span", "gf-count", "no cards"));
    }
    node.append(hand, catches(seat));
    if (options.onSeat) {
      // A button while it may be asked (a card picked, the seat legal for it); else named
      // but disabled, and Tab skips it.
      const legal = Boolean(options.legalTargets && options.legalTargets.has(seat.seat));
      node.classList.add("gf-target");
      node.classList.toggle("gf-legal", legal);
      node.setAttribute("role", "button");
      const name = options.labels && options.labels[seat.seat];
      node.setAttribute("aria-label", `ask seat ${seat.seat}${name ? ` (${name})` : ""}`);
      if (legal) node.tabIndex = 0;
      else node.setAttribute("aria-disabled", "true");
      node.addEventListener("click", () => options.onSeat(seat.seat));
      node.addEventListener("keydown", event => {
        if (event.target !== node || (event.key !== "Enter" && event.key !== " ")) return;
        event.preventDefault();
        if (legal && !event.repeat) options.onSeat(seat.seat);
      });
    }
    return node;
  }

  function viewerPanel(seat, options) {
    const node = el("div", "gf-me");
    marks(node, seat);
    const tag = seat.winner ? "WINNER" : seat.to_move ? "your turn" : `${seat.hand_size} cards`;
    node.append(label(seat, tag));
    const hand = el("div", "gf-hand");
    const cards = (seat.cards || []).map(name => {
      if (!options.onCard) return card(name);
      const node = card(name, "button");
      node.type = "button";
      node.classList.add("gf-pickable");
      node.setAttribute("aria-label", cardName(name));
      const selected = Boolean(options.selected && rankOf(name) === rankOf(options.selected));
      node.classList.toggle("gf-selected", selected);
      node.setAttribute("aria-pressed", String(selected));
      node.addEventListener("click", event => { event.stopPropagation(); options.onCard(name); });
      return node;
    });
    if (cards.length) fan(hand, cards, 5.6, 66, 5.9);
    else hand.append(el("span", "gf-count", "no cards"));
    node.append(hand, catches(seat));
    if (options.onSeat) {
      node.classList.add("gf-target");
      node.addEventListener("click", () => options.onSeat(seat.seat));
    }
    return node;
  }

  function center(scene, options) {
    const node = el("div", "gf-center");
    const pool = el("div", "gf-pool");
    const stack = el("div", "gf-hand");
    for (let i = 0; i < Math.min(scene.pool_size, 4); i++) stack.append(back());
    const count = el("span", "gf-pool-count", `Pool: ${scene.pool_size} card${scene.pool_size === 1 ? "" : "s"}`);
    count.dataset.pool = scene.pool_size;
    pool.append(stack, count);
    node.append(pool);
    const ask = scene.last_ask;
    if (ask) {
      node.append(el("div", "gf-ask", ask.text));
      node.append(el("div", `gf-answer ${ask.handed ? "gf-hit" : "gf-miss"}`, ask.answer.join(" ")));
    }
    node.append(el("div", "gf-status", scene.status));
    if (options.extra) node.append(options.extra);
    return node;
  }

  // Draw `scene` into `root`. options: onCard(card) makes the viewer's cards buttons,
  // onSeat(seat) the seats (buttons while in legalTargets, a Set of seats; `labels` names
  // their players), `selected` marks a card's rank. The viewer's panel comes first, then
  // the middle (the suit picker), then the other seats clockwise from the viewer's left:
  // the order Tab takes through a turn.
  function render(root, scene, options = {}) {
    const table = el("div", "gf-table");
    table.append(el("div", "gf-felt"), el("div", "gf-title", scene.title));
    const players = scene.seats.length;
    const bottom = scene.viewer === null ? 0 : scene.viewer;
    const places = positions(players, bottom);
    const others = [];
    for (let k = 0; k < players; k++) {
      const seat = scene.seats[(bottom + k) % players];
      if (seat.seat === scene.viewer) table.append(viewerPanel(seat, options));
      else others.push(seatPanel(seat, places[seat.seat], options));
    }
    if (scene.viewer === null) table.append(...others, center(scene, options));
    else table.append(center(scene, options), ...others);
    root.replaceChildren(table);
  }

  // The scene from one seat's eyes, made from a scene with every hand face up (replays).
  function seatView(scene, viewer) {
    const seats = scene.seats.map(seat => ({...seat, cards: seat.seat === viewer ? seat.cards : null}));
    const title = scene.title.replace(/every hand face up$/, `seat ${viewer}'s view`);
    return {...scene, seats, viewer, title, status: statusFor(scene, viewer)};
  }

  // The status line as gofish_env.scene words it for a viewer ("Your turn", "you win").
  function statusFor(scene, viewer) {
    const name = seat => seat === viewer ? "you" : scene.seats[seat].label;
    if (scene.over) {
      const winners = scene.seats.filter(seat => seat.winner).map(seat => seat.seat);
      if (!winners.length) return "Game over: nobody wins.";
      if (winners.length > 1) return `Game over: ${winners.map(name).join(" and ")} share the win.`;
      return `Game over: ${name(winners[0])} ${winners[0] === viewer ? "win" : "wins"}.`;
    }
    if (scene.current_player === null) return "";
    if (scene.current_player === viewer) return "Your turn to ask.";
    return `${scene.seats[scene.current_player].label} to ask.`;
  }

  // The log beside the table: one line per event, with private notes.
  function logLine(entry) {
    const line = el("div", `gf-kind-${entry.kind}`, entry.text);
    if (entry.note) line.append(" ", el("span", "gf-note", `(${entry.note})`));
    return line;
  }

  return {render, seatView, logLine, suitSvg, card, cardName, el, rankOf, SUIT_NAMES};
})();
