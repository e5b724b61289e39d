// Yacht in the browser. The server decides everything; this page shows what it is told and sends
// the person's choices. No build step, no library: plain DOM.
"use strict";

const $ = (id) => document.getElementById(id);
const PIPS = {
  1: [[50, 50]], 2: [[28, 28], [72, 72]], 3: [[28, 28], [50, 50], [72, 72]],
  4: [[28, 28], [72, 28], [28, 72], [72, 72]], 5: [[28, 28], [72, 28], [50, 50], [28, 72], [72, 72]],
  6: [[28, 26], [72, 26], [28, 50], [72, 50], [28, 74], [72, 74]],
};
const SEAT_COLORS = ["#f59e0b", "#2563eb", "#db2777", "#7c3aed", "#0d9488"];

// The bonus lines of a sheet, read off its cells and total (the total holds every bonus): what the
// server's sheets say, and what an agent's turn being replayed shows step by step.
function bonusesOf(rules, sheet) {
  let upper = 0, written = 0;
  rules.rows.forEach((row, i) => {
    const value = sheet.cells[i];
    if (value === null || value === undefined) return;
    written += value;
    if (row.upper) upper += value;
  });
  const upperBonus = rules.bonus_points && upper >= rules.bonus_threshold ? rules.bonus_points : 0;
  return { upper, upperBonus, yahtzeeBonus: sheet.total - written - upperBonus };
}

// Rows to draw after row ``index`` of the sheet: the upper subtotal and bonus after the last upper
// row, the extra-Yahtzee bonus after the last row. ``cells(sheet, kind)`` gives one column's cells.
function bonusLines(rules, index, columns, filler) {
  const lastUpper = rules.rows.map((r) => r.upper).lastIndexOf(true);
  const lines = [];
  const line = (kind, title, value) => el("tr", { class: `bonus ${kind}`, "data-bonus": kind }, el("td", {}, title),
    ...columns.flatMap((sheet) => [el("td", { class: "num" }, value(bonusesOf(rules, sheet))), ...filler(sheet)]));
  if (rules.bonus_points && index === lastUpper) {
    lines.push(line("upper-subtotal", "Upper subtotal", (b) => `${b.upper}/${rules.bonus_threshold}`));
    lines.push(line("upper-bonus", `Bonus (${rules.bonus_points} at ${rules.bonus_threshold})`, (b) => b.upperBonus || ""));
  }
  if (rules.yahtzee_bonus && index === rules.rows.length - 1) {
    lines.push(line("yahtzee-bonus", `Yahtzee bonus (${rules.yahtzee_bonus} each)`, (b) => b.yahtzeeBonus || ""));
  }
  return lines;
}
const AGENT_STEP_MS = 650;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function dieSvg(value) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 100 100");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `die showing ${value}`);
  const face = document.createElementNS(ns, "rect");
  Object.entries({ x: 4, y: 4, width: 92, height: 92, rx: 18, class: "face" }).forEach(([k, v]) => face.setAttribute(k, v));
  svg.append(face);
  for (const [cx, cy] of PIPS[value] || []) {
    const pip = document.createElementNS(ns, "circle");
    Object.entries({ cx, cy, r: 9, class: "pip" }).forEach(([k, v]) => pip.setAttribute(k, v));
    svg.append(pip);
  }
  return svg;
}

async function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch (error) {
    throw new Error("the server cannot be reached; check it is running, then reload");
  }
  let data = null;
  try { data = await response.json(); } catch (error) { /* not JSON */ }
  if (!response.ok) {
    const message = (data && data.error) || `the server answered ${response.status}`;
    const failure = new Error(message);
    failure.status = response.status;
    throw failure;
  }
  return data;
}

const fmt = (value, digits = 2) => (value === null || value === undefined || Number.isNaN(value)) ? "–" : Number(value).toFixed(digits);
const savedName = () => localStorage.getItem("yacht.name") || "";

function rememberGame(secret, info) {
  const games = JSON.parse(localStorage.getItem("yacht.games") || "{}");
  if (info === null) delete games[secret]; else games[secret] = info;
  localStorage.setItem("yacht.games", JSON.stringify(games));
}

// -- lobby -------------------------------------------------------------------------------------

async function lobby() {
  const heroDice = $("hero-dice");
  [6, 5, 4, 3, 2].forEach((v) => heroDice.append(dieSvg(v)));
  heroDice.querySelectorAll("svg").forEach((svg) => svg.classList.add("die"));
  const name = $("name");
  name.value = savedName();
  if (savedName()) $("who").append(el("a", { href: `/player/${encodeURIComponent(savedName())}` }, "My games"));
  let agents = [];
  // the server names the rule sets and the modes; this is only what the page shows when it cannot be reached
  let offered = { rules: ["yacht"], rule_titles: {}, default_rules: "yacht", modes: {} };
  try {
    offered = await api("GET", "/api/agents");
    agents = offered.agents;
  } catch (error) { $("error").textContent = error.message; }
  const titleOf = (rules) => offered.rule_titles[rules] || rules;
  const rulesSelect = $("rules");
  offered.rules.forEach((name) => rulesSelect.append(el("option", { value: name }, titleOf(name))));
  rulesSelect.value = localStorage.getItem("yacht.rules") || offered.default_rules;
  if (!rulesSelect.value) rulesSelect.value = offered.default_rules;
  rulesSelect.addEventListener("change", () => pickers());

  const pick = $("agent-pick");
  function pickers() {
    const mode = document.querySelector("input[name=mode]:checked").value;
    const playable = agents.filter((agent) => !agent.rules || agent.rules.includes(rulesSelect.value));
    pick.replaceChildren();
    $("agents-field").classList.toggle("hidden", mode === "solitaire");
    if (mode === "solitaire") return;
    const count = (offered.modes[mode] || [0, 1])[1]; // the most agents the mode seats
    $("agents-help").textContent = mode === "duplicate"
      ? "The agent that plays your dice after you:"
      : "Who sits at the table (seats 2 to 5; leave a seat empty with –):";
    // an agent is offered only where it sits: one that plays only at a table is not offered in duplicate mode, and
    // one of a table of two (exact2, br:optimal) only in the first seat, which then leaves the other seats empty
    const most = (agent) => (agent.table_sizes || [1, 5])[1];
    const fits = (agent, i) => (mode === "table" ? i === 0 || most(agent) > 2 : agent.alone !== false);
    const selects = [];
    for (let i = 0; i < count; i += 1) {
      const select = el("select", { "aria-label": `agent ${i + 1}`, class: "agent-select" });
      if (mode === "table" && i > 0) select.append(el("option", { value: "" }, "–"));
      playable.filter((agent) => fits(agent, i)).forEach((agent) => select.append(el("option", { value: agent.policy, title: agent.about || "" }, agent.name === agent.policy ? agent.name : `${agent.name} (${agent.policy.split(":")[1]})`)));
      if (mode === "table" && i > 0) select.value = "";
      pick.append(select);
      selects.push(select);
    }
    // what each chosen agent is (exact2, br:optimal, plan2: ... are names, not explanations), in --help's words
    const about = el("div", { class: "muted small", id: "agents-about" });
    pick.append(about);
    const describe = () => {
      const chosen = selects.map((select) => playable.find((agent) => agent.policy === select.value)).filter(Boolean);
      about.replaceChildren(...[...new Set(chosen)].map((agent) => el("div", {}, `${agent.name}: ${agent.about || ""}`)));
    };
    selects.forEach((select) => select.addEventListener("change", describe));
    const seatsFit = () => {
      const first = playable.find((agent) => agent.policy === selects[0].value);
      const two = mode === "table" && first && most(first) <= 2;
      selects.slice(1).forEach((select) => {
        if (two) select.value = "";
        select.disabled = two;
        select.title = two ? `${first.name} plays at a table of 2` : "";
      });
    };
    if (selects.length) selects[0].addEventListener("change", seatsFit);
    seatsFit();
    describe();
    if (!agents.length) $("agents-help").textContent = "This server offers no agents (yacht serve --agents ...).";
    else if (!playable.length) $("agents-help").textContent = `No agent here plays ${titleOf(rulesSelect.value)}.`;
  }
  document.querySelectorAll("input[name=mode]").forEach((input) => input.addEventListener("change", pickers));
  pickers();

  $("new-game").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("error").textContent = "";
    const mode = document.querySelector("input[name=mode]:checked").value;
    const chosen = [...document.querySelectorAll(".agent-select")].map((s) => s.value).filter(Boolean);
    $("start").disabled = true;
    try {
      const rules = rulesSelect.value;
      const game = await api("POST", "/api/games", { name: name.value, mode, agents: chosen, coach: $("coach").checked, rules });
      localStorage.setItem("yacht.name", name.value.trim());
      localStorage.setItem("yacht.rules", rules);
      rememberGame(game.secret, { mode, rules, agents: chosen.map((p) => p.split(":")[0]), started: new Date().toISOString() });
      location.href = game.url;
    } catch (error) {
      $("error").textContent = error.message;
      $("start").disabled = false;
    }
  });
  // enabled only now: a click before the form is handled would send it as a plain GET and lose the game
  $("start").disabled = false;

  const games = Object.entries(JSON.parse(localStorage.getItem("yacht.games") || "{}"));
  if (games.length) {
    $("resume").classList.remove("hidden");
    for (const [secret, info] of games.slice(-5).reverse()) {
      const against = info.agents && info.agents.length ? ` vs ${info.agents.join(", ")}` : "";
      const rules = info.rules ? `${titleOf(info.rules)}, ` : "";
      $("resume-list").append(el("li", {}, el("span", {}, `${rules}${info.mode}${against}`, el("span", { class: "muted small" }, ` · ${new Date(info.started).toLocaleString()}`)),
        el("a", { href: `/game/${secret}` }, "continue")));
    }
  }
}

// -- the table ---------------------------------------------------------------------------------

const game = {
  secret: null, view: null, held: new Set(), busy: false, selected: null, skip: false, animating: false, log: [],
  playing: null,  // the agent decision being shown step by step
  dieFocus: null,  // the die that had the focus, given back when the dice are drawn again
};

// What a reload must not lose, kept for this tab: the dice held at a position, and the coach's last card.
function keep(kind, value) {
  try { sessionStorage.setItem(`yacht.${kind}.${game.secret}`, JSON.stringify(value)); } catch (error) { /* storage off */ }
}

function kept(kind) {
  try { return JSON.parse(sessionStorage.getItem(`yacht.${kind}.${game.secret}`) || "null"); } catch (error) { return null; }
}

function restoreHeld(view) {
  const saved = kept("held");
  const dice = view.current && view.current.dice ? view.current.dice.length : 0;
  if (!saved || saved.seq !== view.seq || !Array.isArray(saved.held)) return;
  game.held = new Set(saved.held.filter((i) => Number.isInteger(i) && i >= 0 && i < dice));
}

function youSeat(view) { return view.game.players.findIndex((p) => p.kind === "human"); }

async function table() {
  game.secret = decodeURIComponent(location.pathname.split("/").pop());
  $("roll").addEventListener("click", roll);
  $("skip").addEventListener("click", () => { game.skip = true; });
  document.addEventListener("keydown", onKey);
  window.addEventListener("resize", fitTables);
  try {
    const view = await api("GET", `/api/games/${encodeURIComponent(game.secret)}?since=0`);
    game.view = view;
    const you = youSeat(view);
    $("who").textContent = view.game.players[you].name;
    $("sheet-title").textContent = `Score sheet · ${view.rules.title}`;
    document.title = `${view.rules.title}: game`;
    $("page-title").textContent = `${view.rules.title}: a game`;
    for (const event of view.events) note(event, view);
    restoreHeld(view);
    const coach = kept("coach");
    if (coach && !view.finished) showCoach(coach);
    render();
    if (view.finished) showOver();
  } catch (error) {
    $("fatal").textContent = error.message;
    $("fatal").classList.remove("hidden");
    $("table").classList.add("hidden");
  }
}

function myTurn() {
  const view = game.view;
  return view && !view.finished && view.current && view.current.kind === "human" && !game.busy && !game.animating;
}

function render(partialSheets) {
  const view = game.view;
  const you = youSeat(view);
  const current = view.current;
  const mine = myTurn();
  // for scripts and tests: how far the page is, and whether it waits for the person
  document.body.dataset.seq = view.seq;
  document.body.dataset.state = view.finished ? "finished" : mine ? "ready" : "waiting";
  document.body.classList.toggle("animating", game.animating);
  const title = $("turn-title"), sub = $("turn-sub");
  if (game.animating && game.playing) {
    title.textContent = `${game.playing.player} is playing`;
    sub.textContent = view.game.mode === "duplicate" ? `your dice, turn ${game.playing.turn}` : `turn ${game.playing.turn}`;
  } else if (view.finished) {
    title.textContent = "Game over";
    sub.textContent = "";
  } else if (current.kind === "human") {
    title.textContent = `Turn ${current.turn} of ${view.rows.length}`;
    sub.textContent = `roll ${current.roll} of ${view.rules.rolls_per_turn}`;
  } else {
    title.textContent = `${current.name} is playing`;
    sub.textContent = `turn ${current.turn}`;
  }
  const dice = $("dice");
  const focused = [...dice.children].indexOf(document.activeElement);
  if (focused >= 0) game.dieFocus = focused;
  else if (document.activeElement !== document.body) game.dieFocus = null;  // the person moved on to something else
  dice.replaceChildren();
  const values = current && current.dice && !game.animating ? current.dice : [];
  values.forEach((value, i) => {
    const die = el("button", { class: `die${game.held.has(i) ? " held" : ""}${game.justRolled && game.justRolled.has(i) ? " rolling" : ""}`,
      "aria-pressed": game.held.has(i) ? "true" : "false", "aria-label": `die ${i + 1}: ${value}${game.held.has(i) ? ", held" : ""}`,
      "data-value": value, disabled: !mine || current.rolls_left === 0, onclick: () => toggleHold(i) });
    die.append(dieSvg(value), el("span", { class: "key" }, game.held.has(i) ? "held" : String(i + 1)));
    dice.append(die);
  });
  game.justRolled = null;
  const refocus = dice.children[game.dieFocus];
  if (refocus && !refocus.disabled) refocus.focus({ preventScroll: true });  // drawn again, the clicked die keeps the focus
  if (!game.animating) keep("held", { seq: view.seq, held: [...game.held] });
  const rollButton = $("roll");
  if (game.animating) {
    rollButton.textContent = game.playing ? `Waiting for ${game.playing.player}…` : "Waiting…";
    rollButton.disabled = true;
  } else if (current && current.kind === "human" && !view.finished) {
    const left = current.rolls_left;
    rollButton.textContent = left === 0 ? "Pick a row" : game.held.size === values.length ? "Release a die to roll" : `Roll (${left} left)`;
    rollButton.disabled = !mine || left === 0 || game.held.size === values.length;
  } else {
    rollButton.textContent = view.finished ? "Game over" : "Waiting…";
    rollButton.disabled = true;
  }
  renderSheet(partialSheets || view.sheets, you, mine ? current.now : null);
  showReplaced(view.replaced || []);
}

// An agent the server had to replace (its model could not choose) is named, with why and who plays its seat now.
function showReplaced(replaced) {
  const notice = $("replaced");
  notice.textContent = replaced.map((r) => `${r.policy} could not choose (${r.reason}); ${r.by} plays its seat from here on.`).join(" ");
  notice.classList.toggle("hidden", !replaced.length);
}

function renderSheet(sheets, you, now) {
  const view = game.view;
  const players = view.game.players;
  const order = [you, ...players.map((p) => p.seat).filter((s) => s !== you)];
  const head = el("tr", {}, el("th", {}, "Row"),
    ...order.map((s) => el("th", { class: "num", title: players[s].name }, el("span", {}, s === you ? "You" : players[s].name))));
  if (now) head.insertBefore(el("th", { class: "num col-now" }, el("span", {}, "Now")), head.children[2] || null);
  const body = el("tbody");
  const openRows = now ? view.rows.filter((r) => r.name in now).map((r) => r.name) : [];
  if (game.selected && !openRows.includes(game.selected)) game.selected = null;
  const lastUpper = view.rules.rows.map((r) => r.upper).lastIndexOf(true);
  view.rows.forEach((row, index) => {
    const open = now && row.name in now;
    const closedToJoker = now && !open && sheets[you].cells[index] === null;  // open, but the joker rule sends the dice elsewhere
    const tr = el("tr", {
      class: `row${open ? " open can" : ""}${closedToJoker ? " barred" : ""}${game.selected === row.name ? " selected" : ""}${index === lastUpper ? " upper-end" : ""}`,
      "data-row": row.name, tabindex: open ? "0" : null,
      onclick: open ? () => score(row.name) : null,
    }, el("td", {}, row.title));
    order.forEach((s, position) => {
      const value = sheets[s].cells[index];
      tr.append(el("td", { class: `num${value !== null ? " filled" : ""}${game.fresh === `${s}:${row.name}` ? " fresh" : ""}` }, value === null ? "" : value));
      if (position === 0 && now) {
        tr.append(el("td", { class: `num now${open && now[row.name] === 0 ? " zero" : ""}` }, open ? `+${now[row.name]}` : ""));
      }
    });
    body.append(tr);
    body.append(...bonusLines(view.rules, index, order.map((s) => sheets[s]), (sheet) => (now && sheet === sheets[you] ? [el("td")] : [])));
  });
  // in duplicate mode the agent plays the person's dice after the person's last row: until then its column waits
  const waiting = order.filter((s) => view.game.mode === "duplicate" && s !== you && sheets[s].cells.every((c) => c === null));
  const foot = el("tfoot", {}, el("tr", {}, el("td", {}, "Total"),
    ...order.flatMap((s, position) => [el("td", { class: "num", title: waiting.includes(s) ? "plays after you" : null }, waiting.includes(s) ? "–" : sheets[s].total),
      position === 0 && now ? el("td") : null])));
  $("sheet").replaceChildren(el("thead", {}, head), body, foot);
  const note = $("sheet-note");
  note.textContent = waiting.map((s) => `${players[s].name} plays these same dice after your last row; its column fills in then.`).join(" ");
  note.classList.toggle("hidden", !waiting.length);
  fitTables();
}

// A table wider than its box is drawn tighter (smaller cells, the players' names written upwards); if it is still
// too wide, its box is marked as scrolling sideways, with the first column kept in view.
function fitTables() {
  for (const box of document.querySelectorAll(".scroll")) {
    const table = box.querySelector("table");
    if (!table || !box.clientWidth) continue;
    table.classList.remove("tight");
    if (table.scrollWidth > box.clientWidth + 1) table.classList.add("tight");
    const overflows = table.scrollWidth > box.clientWidth + 1;
    box.classList.toggle("overflows", overflows);
    // scrolled sideways, the row names and the next column (the person's own) stay put: that one sits after the first
    const first = table.querySelector("tr > :first-child");
    if (overflows && first) box.style.setProperty("--first-column", `${first.getBoundingClientRect().width}px`);
  }
}

function toggleHold(i) {
  if (!myTurn() || game.view.current.rolls_left === 0) return;
  if (game.held.has(i)) game.held.delete(i); else game.held.add(i);
  render();
}

async function roll() {
  if (!myTurn() || game.view.current.rolls_left === 0) return;
  const hold = [...game.held].sort();
  if (hold.length === game.view.current.dice.length) return;
  await send({ hold }, new Set([0, 1, 2, 3, 4].filter((i) => !game.held.has(i))));
}

async function score(row) {
  if (!myTurn()) return;
  await send({ row });
}

async function send(choice, rolled) {
  game.busy = true;
  $("error").textContent = "";
  render();
  const seq = game.view.seq;
  try {
    const view = await api("POST", `/api/games/${encodeURIComponent(game.secret)}/actions`, { seq, ...choice });
    game.held = new Set();
    game.selected = null;
    await take(view, rolled);
  } catch (error) {
    $("error").textContent = error.message;
    if (error.status === 409) {  // the page is behind the server: show the server's position
      const view = await api("GET", `/api/games/${encodeURIComponent(game.secret)}?since=${seq}`);
      game.held = new Set();
      await take(view);
      // the server's word is "reload"; this page has just caught up, so say what happened instead
      $("error").textContent = "The game had moved on (in another tab or window?): this page now shows where it stands.";
    }
  } finally {
    game.busy = false;
    render();
  }
}

async function take(view, rolled) {
  const you = youSeat(view);
  const agentEvents = view.events.filter((e) => e.seat !== you);
  if (view.coach) {
    showCoach(view.coach);
    keep("coach", view.coach);
  }
  const previous = game.view;
  game.view = view;
  if (agentEvents.length) await animateAgents(previous, view, agentEvents);
  game.justRolled = rolled && view.current && view.current.kind === "human" ? rolled : null;
  const scored = view.events.find((e) => e.seat === you && e.row);
  game.fresh = scored ? `${you}:${scored.row}` : null;
  if (view.finished) {
    const me = game.secret;
    rememberGame(me, null);
    render();
    showOver();
  }
}

function sleep(ms) {
  return new Promise((resolve) => {
    const started = Date.now();
    const tick = () => (game.skip || Date.now() - started >= ms ? resolve() : setTimeout(tick, 30));
    tick();
  });
}

async function animateAgents(previous, view, events) {
  game.animating = true;
  game.skip = false;
  const panel = $("agent-panel");
  panel.classList.remove("hidden");
  // the sheets as they were before these agent decisions, filled in one by one
  const sheets = view.sheets.map((sheet) => ({ ...sheet, cells: [...sheet.cells] }));
  const rowIndex = Object.fromEntries(view.rows.map((r, i) => [r.name, i]));
  const pending = events.filter((e) => e.row);
  for (const event of pending) sheets[event.seat].cells[rowIndex[event.row]] = null;
  for (const sheet of sheets) {
    const later = pending.filter((e) => e.seat === sheet.seat);
    if (later.length) sheet.total = later[0].total - later[0].points;
  }
  render(sheets);
  let shown = 0;
  for (const event of events) {
    if (game.skip) break;
    game.playing = event;
    shown += 1;
    $("agent-title").textContent = `${event.player}, turn ${event.turn}`;
    const dice = $("agent-dice");
    dice.replaceChildren(...event.dice.map((value, i) => {
      const die = el("span", { class: `die${event.rerolled.includes(i) ? " rerolled" : ""}`, "data-value": value });
      die.append(dieSvg(value));
      return die;
    }));
    $("agent-step").textContent = event.row ? `${event.label}, total ${event.total}` : `${event.label}…`;
    if (event.row) {
      sheets[event.seat].cells[rowIndex[event.row]] = event.row_points;
      sheets[event.seat].total = event.total;
      game.fresh = `${event.seat}:${event.row}`;
    }
    render(sheets);
    note(event, view);  // the table talk follows the step-by-step display, never ahead of it
    await sleep(AGENT_STEP_MS);
  }
  for (const event of events.slice(shown)) note(event, view);  // skipped: the rest at once
  game.skip = false;
  game.fresh = null;
  game.playing = null;
  game.animating = false;
  panel.classList.add("hidden");
}

function note(event, view) {
  const you = youSeat(view);
  if (event.seat === you || !event.row) return;
  game.log.push(`${event.player}, turn ${event.turn}: ${event.label}, total ${event.total}`);
  const log = $("log");
  log.replaceChildren(...game.log.slice(-30).reverse().map((line) => el("li", {}, line)));
  $("log-card").classList.remove("hidden");
}

// A chance as a percentage to one decimal: the solved two-player game tells apart what whole percents would not.
function pct(chance) {
  return `${(100 * chance).toFixed(1)}%`;
}

// An option's chances as the coach's card writes them: its chance of winning (the solved game's in tenths of a percent,
// others in whole percents), and beside it, where a shipped table planner's is given too, the learned one. With two
// figures, each is held together by no-break spaces, so that a narrow card wraps the line between figures only.
function coachChances(coach, win, learned) {
  const two = !(learned === null || learned === undefined);
  const figure = (label, text) => two ? `  · ${label} ${text}`.replace(/(\S) /g, "$1\u00a0") : `  · ${label} ${text}`;
  const percent = (chance) => coach.win_exact ? pct(chance) : `${Math.round(100 * chance)}%`;
  const shown = win === null || win === undefined ? "" : figure(coach.win_learned ? "learned win" : "win", percent(win));
  return two ? shown + figure(coach.learned_win_label, `${Math.round(100 * learned)}%`) : shown;
}

function showCoach(coach) {
  const card = $("coach");
  card.classList.remove("hidden");
  const best = coach.loss <= 1e-9;
  const top = coach.options.length ? coach.options[0].expected : 0;
  const low = Math.min(...coach.options.map((o) => o.expected), coach.chosen_expected);
  const span = Math.max(top - low, 1e-6);
  const bar = coach.learned_win_label ? "bar two" : "bar";  // two chances an option: its line may wrap
  const yours = coach.learned_win_label ? "  ←\u00a0yours" : "  ← yours";
  card.replaceChildren(...[
    el("h2", {}, "Coach"),
    // the card stays up while the game moves on: it names the decision it grades (a card kept from before it did has none)
    coach.decision ? el("div", { class: "decision", id: "coach-decision" }, coach.decision) : null,
    el("div", { class: `verdict ${best ? "best" : "cost"}` }, best
      ? `${coach.chosen} is the best choice: expected final score ${fmt(coach.chosen_expected)}`
      : `${coach.chosen} cost you ${fmt(coach.loss)} points: expected ${fmt(coach.chosen_expected)} against ${fmt(coach.best_expected)} for ${coach.best}`),
    coach.win_exact ? el("div", { class: `verdict ${coach.win_loss <= 1e-9 ? "best" : "cost"}`, id: "coach-win" }, coach.win_loss <= 1e-9
      ? `To win: ${coach.chosen} is the best choice (chance of winning ${pct(coach.chosen_win)})`
      : `To win: ${coach.chosen} cost you ${fmt(100 * coach.win_loss)} percentage points of your chance of winning: ${pct(coach.chosen_win)} against ${pct(coach.win_best_chance)} for ${coach.win_best}`) : null,
    coach.win_note ? el("div", { class: "muted small", id: "coach-win" }, `Not graded in chances of winning: ${coach.win_note.replace(/^decisions not graded in chances of winning: /, "")}`) : null,
    el("div", { class: "muted small" }, `With dice ${coach.dice.join(" ")}, the options by expected final score` +
      (coach.chosen_win === null || coach.chosen_win === undefined ? ":" : coach.win_learned
        ? " (and the chance of winning this game, as the shipped table planner learned it in self-play: not exact):"
        : coach.learned_win_label
          ? ` (and the chance of winning this game; ${coach.learned_win_label}: as the shipped table planner learned it in self-play, not exact):`
          : " (and the chance of winning this game):")),
    ...coach.options.map((option) => {
      const width = 25 + 75 * (option.expected - low) / span;
      return el("div", { class: `option${option.chosen ? " chosen" : ""}` },
        el("div", { class: bar }, el("i", { style: `width:${width}%` }), el("span", {}, option.label + coachChances(coach, option.win, option.learned_win) + (option.chosen ? yours : ""))),
        el("b", {}, fmt(option.expected)));
    }),
    coach.options.some((o) => o.chosen) ? null : el("div", { class: "option chosen" },
      el("div", { class: bar }, el("i", { style: "width:20%" }), el("span", {}, `${coach.chosen}${coachChances(coach, coach.chosen_win, coach.chosen_learned_win)}${yours}`)),
      el("b", {}, fmt(coach.chosen_expected))),
  ].filter((child) => child !== null));  // replaceChildren would show a null as the text "null"
}

function onKey(event) {
  if (event.target.tagName === "INPUT" || event.ctrlKey || event.metaKey || event.altKey) return;
  if (game.animating && (event.key === "s" || event.key === "Escape")) { game.skip = true; return; }
  if (!myTurn()) return;
  const current = game.view.current;
  if (/^[1-5]$/.test(event.key)) { toggleHold(Number(event.key) - 1); event.preventDefault(); return; }
  if (event.key === " " || event.key === "r" || event.key === "R") { event.preventDefault(); roll(); return; }
  const open = game.view.rows.filter((r) => r.name in current.now).map((r) => r.name);
  if (event.key === "ArrowDown" || event.key === "ArrowUp") {
    event.preventDefault();
    const at = open.indexOf(game.selected);
    const step = event.key === "ArrowDown" ? 1 : -1;
    game.selected = open[at === -1 ? (step > 0 ? 0 : open.length - 1) : (at + step + open.length) % open.length];
    render();
    return;
  }
  if (event.key === "Enter" && game.selected) { event.preventDefault(); score(game.selected); }
}

// -- game over ---------------------------------------------------------------------------------

async function showOver() {
  let summary;
  try {
    summary = await api("GET", `/api/games/${encodeURIComponent(game.secret)}/summary`);
  } catch (error) {
    $("error").textContent = error.message;
    return;
  }
  $("table").classList.add("hidden");
  const over = $("over");
  over.classList.remove("hidden");
  document.body.dataset.state = "over";
  const you = summary.seats.findIndex((s) => s.kind === "human");
  const seats = summary.seats;
  const many = seats.length > 1;
  const winners = summary.winners;
  const headline = !many ? `You scored ${seats[0].total}`
    : winners.length > 1 ? `${winners.join(" and ")} share the win with ${seats.find((s) => winners.includes(s.name)).total}`
      : winners[0] === seats[you].name ? `You win with ${seats[you].total}!` : `${winners[0]} wins with ${Math.max(...seats.map((s) => s.total))}`;

  const sheet = el("table", { class: "sheet" },
    el("thead", {}, el("tr", {}, el("th", {}, "Row"), ...seats.map((s) => el("th", { class: "num", title: s.name }, el("span", {}, s.seat === you ? "You" : s.name))))),
    el("tbody", {}, ...summary.rows.flatMap((row, i) => [el("tr", { class: summary.rules.rows[i].upper && !(summary.rules.rows[i + 1] || {}).upper ? "upper-end" : "" }, el("td", {}, row.title),
      ...seats.map((s) => el("td", { class: "num filled" }, s.cells[i]))), ...bonusLines(summary.rules, i, seats, () => [])])),
    el("tfoot", {}, el("tr", {}, el("td", {}, "Total"), ...seats.map((s) => el("td", { class: `num${winners.includes(s.name) ? " win" : ""}` }, s.total)))));

  const grades = el("div", { class: "grades" }, ...seats.map((s) => el("div", { class: "grade" },
    el("div", {}, el("b", {}, s.seat === you ? "You" : s.name), " ", el("span", { class: `pill ${s.kind === "human" ? "you" : "agent"}` }, s.kind)),
    el("div", { class: "big" }, fmt(s.loss_per_decision, 3)),
    el("div", { class: "muted small" }, "points lost per decision"),
    el("dl", {},
      el("dt", {}, `re-rolls (${s.reroll_decisions})`), el("dd", {}, fmt(s.loss_per_reroll, 3)),
      el("dt", {}, `rows (${s.row_decisions})`), el("dd", {}, fmt(s.loss_per_row, 3)),
      el("dt", {}, "lost in all"), el("dd", {}, fmt(s.loss_total)),
      el("dt", {}, "final score"), el("dd", {}, s.total)))));

  const worstRows = seats.flatMap((s) => s.worst.map((w) => ({ ...w, name: s.seat === you ? "You" : s.name })))
    .sort((a, b) => b.loss - a.loss).slice(0, 8);
  const worst = worstRows.length ? el("div", { class: "scroll" }, el("table", { class: "worst" },
    el("thead", {}, el("tr", {}, el("th", {}, "Who"), el("th", { title: "turn.roll: 4.2 is the second roll of turn 4" }, "Turn"), el("th", {}, "Dice"), el("th", {}, "Chose"), el("th", {}, "Best"), el("th", { class: "num" }, "Lost"))),
    el("tbody", {}, ...worstRows.map((w) => el("tr", {}, el("td", {}, w.name), el("td", {}, `${w.turn}.${w.roll}`),
      el("td", {}, w.dice.join(" ")), el("td", {}, w.chosen), el("td", {}, w.best), el("td", { class: "num loss" }, fmt(w.loss)))))),
    el("p", { class: "muted small" }, "Turn 4.2 is the second roll of turn 4; Lost is the expected points the choice gave away."))
    : el("p", { class: "muted" }, "Not a point lost: every decision was optimal.");

  let turns = null;
  if (summary.turns) {
    turns = el("section", { class: "card" }, el("h2", {}, "Turn by turn, on the same dice"), el("div", { class: "scroll" }, el("table", { class: "turns" },
      el("thead", {}, el("tr", {}, el("th", {}, "Turn"), ...seats.flatMap((s) => [el("th", {}, s.seat === you ? "You" : s.name), el("th", { class: "num" }, "total"), el("th", { class: "num" }, "lost")]), el("th", { class: "num" }, "gap"))),
      el("tbody", {}, ...summary.turns.map((t) => el("tr", {}, el("td", {}, t.turn),
        ...t.seats.flatMap((c) => [el("td", {}, `${c.row} (${c.points})`), el("td", { class: "num" }, c.total), el("td", { class: "num" }, fmt(c.loss))]),
        el("td", { class: `num ${t.seats[you].total >= t.seats[1 - you].total ? "win" : "loss"}` }, t.seats[you].total - t.seats[1 - you].total)))))));
  }

  // at a table of two, each decision graded in chances of winning against the solved two-player game
  let chances = null;
  if (seats.some((s) => s.win_decisions)) {
    const costly = seats.flatMap((s) => (s.win_worst || []).map((w) => ({ ...w, name: s.seat === you ? "You" : s.name })))
      .sort((a, b) => b.loss - a.loss).slice(0, 8);
    chances = el("section", { class: "card", id: "win-grade" }, el("h2", {}, "Chance of winning lost"),
      el("p", { class: "muted small" }, "Percentage points of the chance of winning each decision gave away against the best decision, when both play to win from there on (the solved two-player game; 0 is perfect)."),
      el("div", { class: "grades" }, ...seats.map((s) => el("div", { class: "grade" },
        el("div", {}, el("b", {}, s.seat === you ? "You" : s.name), " ", el("span", { class: `pill ${s.kind === "human" ? "you" : "agent"}` }, s.kind)),
        el("div", { class: "big" }, `${fmt(s.win_loss_per_decision, 2)} pp`),
        el("div", { class: "muted small" }, "lost per decision"),
        el("dl", {}, el("dt", {}, `decisions`), el("dd", {}, s.win_decisions),
          el("dt", {}, "lost in the game"), el("dd", {}, `${fmt(s.win_loss_per_game)} pp`))))),
      costly.length ? el("h3", { style: "margin:1rem 0 0.25rem" }, "Costliest decisions to win") : null,
      costly.length ? el("div", { class: "scroll" }, el("table", { class: "worst" },
        el("thead", {}, el("tr", {}, el("th", {}, "Who"), el("th", {}, "Turn"), el("th", {}, "Dice"), el("th", {}, "Chose"), el("th", {}, "Best to win"), el("th", { class: "num", title: "chance of winning after the choice made / after the best" }, "Chance: chose / best"), el("th", { class: "num" }, "Lost, pp"))),
        el("tbody", {}, ...costly.map((w) => el("tr", {}, el("td", {}, w.name), el("td", {}, `${w.turn}.${w.roll}`), el("td", {}, w.dice.join(" ")),
          el("td", {}, w.chosen), el("td", {}, w.best), el("td", { class: "num" }, `${w.chance_chosen.toFixed(1)}% / ${w.chance_best.toFixed(1)}%`),
          el("td", { class: "num loss" }, fmt(w.loss)))))))
        : el("p", { class: "muted" }, "Not a point of the chance of winning lost: every decision was the best to win."));
  } else if (summary.win_note) {
    chances = el("section", { class: "card", id: "win-grade" }, el("h2", {}, "Chance of winning lost"), el("p", { class: "muted small" }, summary.win_note));
  }

  const name = seats[you].name;
  over.replaceChildren(
    el("section", { class: "card" }, el("p", { class: "winner" }, headline),
      el("p", { class: "muted" }, `The optimal strategy averages ${fmt(summary.optimum)} points a game. `,
        el("a", { href: `/player/${encodeURIComponent(name)}` }, `${name}'s games`)),
      el("div", { class: "actions", style: "justify-content:flex-start" }, el("a", { class: "button primary", href: "/" }, "Play again"))),
    el("div", { class: "table-layout" },
      el("section", { class: "card" }, el("h2", {}, "Final sheets"), el("div", { class: "scroll" }, sheet)),
      el("section", { class: "card" }, el("h2", {}, "Grade"),
        el("p", { class: "muted small" }, "Expected points each decision gave away against the optimal strategy (0 is perfect; proficient players stay under 0.2)."),
        grades)),
    el("section", { class: "card chart" }, el("h2", {}, "Points lost per turn"), lossChart(seats, you)),
    ...(chances ? [chances] : []),
    ...(turns ? [turns] : []),
    el("section", { class: "card" }, el("h2", {}, "Costliest decisions"), worst),
  );
  fitTables();
}

// Round ticks from 0 up to at least ``max``, about ``count`` steps of 1, 2, 2.5 or 5 times a power of ten:
// an axis reads 0, 1, 2, 3 rather than 0, 0.72, 1.45, 2.17, 2.9.
function niceTicks(max, count = 4) {
  const raw = Math.max(Number(max) || 0, 1e-9) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw * (1 - 1e-9));
  const steps = Math.max(1, Math.ceil(max / step - 1e-9));
  const digits = Math.max(0, Math.ceil(-Math.log10(step) - 1e-9)) + (Math.abs(step / power - 2.5) < 1e-9 ? 1 : 0);
  return Array.from({ length: steps + 1 }, (_, i) => Number((i * step).toFixed(digits)));
}

function lossChart(seats, you) {
  const ns = "http://www.w3.org/2000/svg";
  const turns = seats[0].loss_by_turn.length;
  // drawn at about the width it is shown, so that its labels keep a readable size on a phone
  const width = Math.round(Math.min(640, Math.max(240, $("over").clientWidth - 36))), height = width < 500 ? 200 : 220;
  const left = 38, bottom = 26, top = 10;
  const step = (width - left - 4) / turns;
  // side by side while each bar stays wide enough to see; stacked, a turn's bar split by seat, when not
  const stacked = (step - 6) / seats.length < 6;
  const barWidth = stacked ? step - 6 : (step - 6) / seats.length;
  const tallest = stacked ? seats[0].loss_by_turn.map((_, t) => seats.reduce((sum, s) => sum + (s.loss_by_turn[t] || 0), 0))
    : seats.flatMap((s) => s.loss_by_turn.map((v) => v || 0));
  const ticks = niceTicks(Math.max(0.5, ...tallest));
  const max = ticks[ticks.length - 1];
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "points lost per turn");
  const add = (tag, attrs, text) => {
    const node = document.createElementNS(ns, tag);
    Object.entries(attrs).forEach(([k, v]) => node.setAttribute(k, v));
    if (text !== undefined) node.textContent = text;
    svg.append(node);
    return node;
  };
  const y = (v) => height - bottom - (height - bottom - top) * v / max;
  for (const v of ticks) {
    add("line", { x1: left, x2: width, y1: y(v), y2: y(v), stroke: "#e5e7eb" });
    add("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end", "font-size": 11, fill: "#6b7280" }, String(v));
  }
  for (let t = 0; t < turns; t += 1) {
    let below = 0;  // stacked: the seats' losses drawn so far this turn
    seats.forEach((s, k) => {
      const v = s.loss_by_turn[t] || 0;
      const base = stacked ? below : 0;
      below += v;
      const rect = add("rect", { x: left + t * step + 3 + (stacked ? 0 : k * barWidth), y: y(base + v), width: barWidth - 1,
        height: Math.max(0, y(base) - y(base + v)), fill: SEAT_COLORS[k % SEAT_COLORS.length], rx: stacked ? 0 : 2 });
      const title = document.createElementNS(ns, "title");
      title.textContent = `${s.seat === you ? "You" : s.name}, turn ${t + 1}: ${v.toFixed(2)} points lost`;
      rect.append(title);
    });
    add("text", { x: left + t * step + step / 2, y: height - 8, "text-anchor": "middle", "font-size": 11, fill: "#6b7280" }, t + 1);
  }
  const legend = el("div", { class: "legend" }, ...seats.map((s, k) => el("span", {}, el("i", { style: `background:${SEAT_COLORS[k % SEAT_COLORS.length]}` }), s.seat === you ? "You" : s.name)),
    el("span", { class: "muted" }, "turn →"));
  return el("div", {}, svg, legend);
}

// -- a player's games --------------------------------------------------------------------------

// The mean score and loss of a player's finished games, per rule set (a Yacht score and a Yahtzee one do not average).
function meansByRules(done) {
  const mean = (values) => values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
  const byRules = new Map();
  done.forEach((g) => byRules.set(g.rules_title || g.rules, [...(byRules.get(g.rules_title || g.rules) || []), g]));
  return [...byRules].map(([title, games]) => `${title}: mean score ${fmt(mean(games.map((g) => g.score)), 1)}, ` +
    `mean loss per decision ${fmt(mean(games.map((g) => g.loss_per_decision)), 3)}`);
}

async function player() {
  const name = decodeURIComponent(location.pathname.split("/").pop());
  $("title").textContent = `${name}'s games`;
  document.title = `Yacht: ${name}`;
  try {
    const history = await api("GET", `/api/players/${encodeURIComponent(name)}`);
    const done = history.games.filter((g) => g.finished);
    $("stats").textContent = history.games.length
      ? [`${history.games.length} game${history.games.length === 1 ? "" : "s"}${history.imported ? ` (${history.imported} imported)` : ""}, ${done.length} finished`, ...meansByRules(done)].join(" · ")
      : "No games yet under this name.";
    // each cell names its column: on a phone the rows stack into "label: value" lines
    const cell = (label, content, attrs = {}) => el("td", { ...attrs, "data-label": label }, el("span", {}, content));
    const result = (g) => !g.finished ? "in progress" : !g.opponents.length ? "–" : g.won ? "won" : `lost (${g.totals.join(" / ")})`;
    $("history").replaceChildren(
      el("thead", {}, el("tr", {}, el("th", {}, "When"), el("th", {}, "Mode"), el("th", {}, "Against"), el("th", { class: "num" }, "Score"), el("th", {}, "Result"), el("th", { class: "num" }, "Lost / decision"), el("th", {}, "Game"))),
      el("tbody", {}, ...history.games.map((g) => el("tr", {},
        cell("When", new Date(g.started).toLocaleString()),
        cell("Mode", (g.rules && g.rules !== "yacht" ? `${g.rules_title} · ` : "") + g.mode + (g.coach ? " · coach" : "") + (g.imported ? " · imported" : "")),
        cell("Against", g.opponents.join(", ") || "–"), cell("Score", g.score ?? "–", { class: "num" }),
        cell("Result", result(g), { class: g.won && g.opponents.length ? "win" : "" }),
        cell("Lost / decision", fmt(g.loss_per_decision, 3), { class: "num" }),
        cell("Game", g.link ? el("a", { href: g.link }, "view") : "–")))));
  } catch (error) {
    $("error").textContent = error.message;
  }
}

const pages = { lobby, game: table, player };
pages[document.body.dataset.page]();
