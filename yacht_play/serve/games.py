"""The games a server runs: create, act, let agents move, and say what a browser may see.

Everything here is synchronous and runs in worker threads (the app calls it through a thread pool,
one request at a time per game), so an agent's thinking never blocks the event loop.

The rules are the project's: a game is a :class:`yacht_play.match.Match` (on ``yacht_env.game``),
and every action goes through ``Match.play``, which refuses an illegal one and changes nothing. A
decision is committed to the database before anything acknowledges it; a match in memory is only
a cache of the rows and is rebuilt from them (``Match.resume``) whenever it is missing.

What a browser sees (:meth:`GameService.view`) is built here and only here: the dice of decisions
already made, and the dice of the seat to move when that seat is the person's. Never the dice
stream, never a seed (a seed regenerates the stream).
"""

from __future__ import annotations

import logging
import math
import re
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from agents.policies.guard import GuardedPolicy, Replacement
from yacht_env.actions import ActionLayout
from yacht_env.echo import echoed
from yacht_env.env import GameOverError
from yacht_env.rules import RULE_SETS, rule_set
from yacht_env.safe_text import unsafe_character
from yacht_env.table.outcome import unique_names
from yacht_play import store
from yacht_play.coach import (
    LEARNED_LABEL,
    Coaching,
    Grader,
    Option,
    coach_decision,
    grade_chances,
    report_players,
    two_player_grading,
)
from yacht_play.commands import choice_label, decision_label, row_points
from yacht_play.match import Match, Player, agent_name
from yacht_play.records import AGENTS_PER_MODE, GameRecord, RecordError
from yacht_play.serve.sheets import now_points, rule_set_title, rules_from_request, rules_view, sheet_view

if TYPE_CHECKING:
    from agents.registry import PolicySpec

MODES = AGENTS_PER_MODE  # the modes offered: mode -> (fewest, most) agents
MAX_NAME = 40
COACH_OPTIONS = 6
CACHE_GAMES = 2000
LOG = logging.getLogger("yacht_play.serve")
SECRET = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what secrets.token_urlsafe makes; anything else finds no game


def player_name(value) -> str:
    """A person's name as the server keeps it: white space collapsed, 1 to ``MAX_NAME`` characters, no control
    character (an ESC or NUL would reach an operator's terminal, and PostgreSQL refuses a NUL) and no lone
    surrogate (it has no UTF-8 form); else ``Refused`` with one line.
    """
    if not isinstance(value, str) or not value.strip():
        raise Refused(f"name: type a player name (1 to {MAX_NAME} characters)")
    name = " ".join(value.split())
    if len(name) > MAX_NAME:
        raise Refused(f"name: {len(name)} characters is too long; at most {MAX_NAME}")
    problem = unsafe_character(name)  # the check every record file's names pass too (yacht import)
    if problem:
        raise Refused(f"name: {problem}; use letters, digits, spaces and punctuation")
    return name


def shown_policy(policy: str) -> str:
    """A policy name as a browser sees it: a model's file name without its folders (``ppo:/srv/m/best.zip`` shows
    as ``ppo:best.zip``), so that no page or answer tells the server's paths; every other name as it is.
    """
    from pathlib import PurePath

    from agents.registry import model_prefixes

    for prefix in model_prefixes():
        if policy.startswith(prefix):
            return prefix + PurePath(policy[len(prefix) :].replace("\\", "/")).name
    return policy


def lobby_names_of(agents: list[str]) -> dict[str, str]:
    """Each of ``agents`` -> its :func:`shown_policy`, numbered (``ppo:best.zip#2``) where two would show alike."""
    shown: dict[str, str] = {}
    for policy in agents:
        name = base = shown_policy(policy)
        number = 1
        while name in shown.values():
            number += 1
            name = f"{base}#{number}"
        shown[policy] = name
    return shown


class Refused(Exception):
    """A request the game refuses; ``status`` is the HTTP status, the message one line for the person."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


@dataclass
class GameInMemory:
    """A game in memory: its match and its database identity."""

    game_id: str
    secret: str
    match: Match
    shown_at: float  # when the position to decide was last shown, for each decision's seconds
    lock: threading.Lock
    replaced: list = field(default_factory=list)  # agents replaced in this game because they could not choose

    def guard_agents(self, shown) -> GameInMemory:
        """Put each agent seat behind a guard of this game's own: an agent that cannot choose (a model whose outputs
        overflow, a policy that raises or picks an illegal action) is replaced for the rest of this game alone, and
        ``replaced`` (the view's) and the log say so once. ``shown``: a policy name as pages may show it.
        """
        for seat in self.match.seats:
            if seat.policy is not None and not isinstance(seat.policy, GuardedPolicy):
                seat.policy = GuardedPolicy(seat.policy, partial(self.note, seat, shown=shown))
        return self

    def note(self, seat, replacement: Replacement, shown) -> None:
        """Say in the view and the log that ``seat``'s agent was replaced (pages never see a server's path)."""
        reason = shown(replacement.reason)
        policy = shown(seat.player.policy)
        self.replaced.append(
            {"seat": seat.index, "name": seat.name, "policy": policy, "by": replacement.fallback, "reason": reason}
        )
        LOG.warning("game %s: seat %d (%s): %s", self.game_id, seat.index, seat.player.policy, replacement.message)


class GameService:
    """The server's games. ``agents`` are the policy names offered in the lobby; they are loaded now for
    ``rules`` (the lobby's default rule set; a model of other rules for its own), and for another rule set
    when its first game asks for them.
    """

    def __init__(self, engine, agents: list[str], rules=None):
        from agents.registry import policy_spec

        self.engine = engine
        self.rules = rule_set(rules)
        self.agents = list(dict.fromkeys(agents))
        self.lobby_names = lobby_names_of(self.agents)  # policy -> the name browsers see and send back
        self._by_lobby_name = {shown: policy for policy, shown in self.lobby_names.items()}
        self.policies = {}  # (name, rules name) -> the solitaire policy (None for a table-only policy such as win)
        self._table_policies: dict[tuple, LockedPolicy] = {}  # (name, players, rules name) -> a policy that reads the table
        self._graders: dict[str, Grader] = {}  # rules name -> its Grader
        self._table_lock = threading.Lock()
        self._rules_lock = threading.Lock()  # building a rule set's policies or grader (a solve) happens once
        try:  # each name resolved once: a game reads what it needs of an agent from its spec
            self.specs: dict[str, PolicySpec] = {name: policy_spec(name) for name in self.agents}
            self.agent_rules = {name: self.specs[name].rule_sets(name) for name in self.agents}  # which rule sets each plays
        except ValueError as error:  # an unknown name, a model file that cannot be read
            raise ValueError(f"--agents: {error}") from None
        for name in self.agents:  # each loaded now for the lobby's rules, or for its own if it plays other rules
            played = self.agent_rules[name]
            try:
                self._solitaire_policy(name, self.rules if self.rules.name in played else rule_set(played[0]))
            except ValueError as error:  # unknown name, missing model file, a model of other rules, ...
                raise ValueError(f"--agents: {error}") from None
        self.grader = self.grader_for(self.rules)
        self._live: OrderedDict[str, GameInMemory] = OrderedDict()  # by secret, least recently used first
        self._guard = threading.Lock()

    def grader_for(self, rules) -> Grader:
        """The grader of ``rules``, solved (or read from the disk cache) on first use and warmed up."""
        grader = self._graders.get(rules.name)
        if grader is not None:  # the common case takes no lock: a first solve of other rules does not hold it up
            return grader
        with self._rules_lock:
            grader = self._graders.get(rules.name)
            if grader is None:
                grader = Grader(rules)
                grader.q_values(np.array([list(rules.dice.hands[0])]), rules.rolls_per_turn - 1, rules.all_open)
                self._graders[rules.name] = grader
            return grader

    def spec(self, name: str) -> PolicySpec:
        """The registry's spec of the agent ``name``: an offered one's, resolved when the server started, or the
        replacement's, resolved on first use. ``ValueError`` for a name that is no policy's.
        """
        spec = self.specs.get(name)
        if spec is None:
            from agents.registry import policy_spec

            spec = self.specs.setdefault(name, policy_spec(name))
        return spec

    def _solitaire_policy(self, name: str, rules):
        """The offered agent ``name`` playing alone under ``rules`` (None for one that only plays at a table)."""
        key = (name, rules.name)
        if key in self.policies:
            return self.policies[key]
        spec = self.spec(name)
        with self._rules_lock:
            if key not in self.policies:
                spec.check_plays_rules(name, rules)
                if not spec.plays_alone:
                    self._table_policy(name, 2, rules)  # built now, so that a bad name stops the start
                    self.policies[key] = None
                else:
                    policy = spec.build(name, rules=rules)
                    warm_up(policy, rules)
                    self.policies[key] = LockedPolicy(policy)
            return self.policies[key]

    # -- games -------------------------------------------------------------------------------

    def create(self, name, mode, agents, coach, rules=None) -> str:
        """A new game for the person ``name`` under ``rules`` (a name of ``RULE_SETS``; default the server's); its secret."""
        name = player_name(name)
        if not isinstance(mode, str) or mode not in MODES:  # a list or object is not hashable: check first
            raise Refused(f"mode {echoed(mode)} is not offered; choose one of {', '.join(MODES)}")
        if not isinstance(agents, list) or not all(isinstance(a, str) for a in agents):
            raise Refused("agents: a list of agent names is expected")
        fewest, most = MODES[mode]
        if not fewest <= len(agents) <= most:
            wanted = "no agents" if most == 0 else f"{fewest} agent" if fewest == most else f"{fewest} to {most} agents"
            raise Refused(f"mode {mode} plays with {wanted}, got {len(agents)}")
        agents = [self.offered_policy(policy) for policy in agents]
        if not isinstance(coach, bool):
            raise Refused("coach: true or false")
        if mode == "table":  # an agent of the solved two-player game (exact2) sits only at a table of two
            for policy in agents:
                try:
                    self.spec(policy).check_plays_at(policy, len(agents) + 1)
                except ValueError as error:
                    raise Refused(self.without_paths(str(error))) from None
        try:
            rules = rules_from_request(rules, self.rules)
            for policy in agents:
                self._solitaire_policy(policy, rules)  # refuses an agent that does not play these rules
        except ValueError as error:
            raise Refused(self.without_paths(str(error))) from None
        self.grader_for(rules)  # a rule set's first game waits for its solver here, not at its first decision
        names = unique_names([name, *(agent_name(p) for p in agents)])
        players = [Player(name, "human"), *(Player(n, "agent", p) for n, p in zip(names[1:], agents))]
        seed = secrets.randbits(62)  # unguessable: the seed regenerates the dice stream
        policies = {seat: self._policy(p, mode, len(players), rules) for seat, p in enumerate(agents, start=1)}
        match = Match.new(players, seed, mode, rules=rules, coach=coach, policies=policies)
        secret = secrets.token_urlsafe(24)
        store.insert_game(self.engine, match.game_id, secret, name, match.header)
        self._keep(
            GameInMemory(match.game_id, secret, match, time.monotonic(), threading.Lock()).guard_agents(self.without_paths)
        )
        return secret

    def offered_policy(self, name: str) -> str:
        """The offered policy a request names, by its shown name (or its own); else ``Refused``."""
        policy = self._by_lobby_name.get(name, name if name in self.lobby_names else None)
        if policy is None:
            offered = ", ".join(self.lobby_names.values()) or "none"
            raise Refused(f"agent {echoed(shown_policy(name))} is not offered here; choose from {offered}")
        return policy

    def without_paths(self, message: str) -> str:
        """``message`` with each offered model's path replaced by its shown name."""
        for policy, shown in self.lobby_names.items():
            if policy != shown:
                message = message.replace(policy, shown)
        return message

    def import_game(self, game: GameRecord) -> bool:
        """Load a recorded game (replayed first, to prove it legal), marked imported; False when its id is there already.

        Its dice must be the ones its seeds deal (a schema-1 stream that no seed deals is refused), and it stays
        marked: the report leaves it out unless asked, and a player's games say so.
        """
        if store.game_row_by_id(self.engine, game.game_id) is not None:
            return False
        match = resume(game, agents=False)
        people = [p["name"] for p in game.players if p["kind"] == "human"]
        score, loss = self._person_result(match) if match.finished else (None, None)
        store.insert_game(
            self.engine,
            game.game_id,
            secrets.token_urlsafe(24),
            people[0] if people else game.players[0]["name"],
            game.header,
            game.decisions,
            game.end,
            score,
            loss,
            imported=True,
        )
        return True

    def live(self, secret) -> GameInMemory:
        """The game whose secret this is, from memory or rebuilt from its rows."""
        if not isinstance(secret, str) or not SECRET.fullmatch(secret):
            raise Refused("no such game", 404)
        with self._guard:
            live = self._live.get(secret)
            if live is not None:
                self._live.move_to_end(secret)
                return live
        row = store.game_row(self.engine, secret)
        if row is None:
            raise Refused("no such game: the link is wrong or the game belongs to another server", 404)
        game = store.load_record(self.engine, row)
        players, mode = game.header["players"], game.header["mode"]
        policies = {}
        rules = RULE_SETS.get(game.header["rules"], self.rules)  # an unknown name: the replay refuses the game
        for player in players:
            if player["kind"] != "agent":
                continue
            if player["policy"] not in self.agents:
                raise Refused(
                    f"game {game.game_id} needs the agent {shown_policy(player['policy'])!r}, which this server does not "
                    f"offer now (start it with --agents including it)",
                    409,
                )
            try:
                self._solitaire_policy(player["policy"], rules)
            except ValueError as error:
                raise Refused(f"game {game.game_id} cannot go on: {self.without_paths(str(error))}", 409) from None
            policies[player["seat"]] = self._policy(player["policy"], mode, len(players), rules)
        # The server's own database names the agents; the server plays them with the policies it loaded.
        match = resume(game, policies=policies, dice_as_recorded=True)  # its own rows: import checked any from a file
        return self._keep(
            GameInMemory(row.game_id, secret, match, time.monotonic(), threading.Lock()).guard_agents(self.without_paths)
        )

    def _policy(self, name: str, mode: str, num_players: int, rules):
        """The offered agent ``name`` for a seat in a game of ``mode`` with ``num_players`` seats, under ``rules``
        (for which :meth:`_solitaire_policy` has built it).
        """
        spec = self.spec(name)
        if spec.reads_totals and mode == "table":  # it sees every seat's total
            try:
                return self._table_policy(name, num_players, rules)
            except ValueError as error:  # a table size it does not sit at, a solution not computed
                raise Refused(self.without_paths(str(error))) from None
        if not spec.plays_alone:
            raise Refused(f"agent {self.lobby_names[name]!r} plays at a table (mode table): it reads the other players' scores")
        return self.policies[(name, rules.name)]

    def _table_policy(self, name: str, num_players: int, rules):
        with self._table_lock:
            key = (name, num_players, rules.name)
            if key not in self._table_policies:
                self._table_policies[key] = LockedPolicy(self.spec(name).build_at_table(name, num_players, rules=rules))
            return self._table_policies[key]

    def shown_name(self, policy: str | None) -> str | None:
        """A seat's policy as a browser sees it (None for a person)."""
        return None if policy is None else self.lobby_names.get(policy) or shown_policy(policy)

    def forget(self, live: GameInMemory) -> None:
        """Drop a game from memory; the next request rebuilds it from its rows."""
        with self._guard:
            if self._live.get(live.secret) is live:
                del self._live[live.secret]

    def _keep(self, live: GameInMemory) -> GameInMemory:
        """Cache ``live`` (unless a request rebuilt the same game first: then that one, so one lock guards it)."""
        with self._guard:
            live = self._live.setdefault(live.secret, live)
            self._live.move_to_end(live.secret)
            while len(self._live) > CACHE_GAMES:
                self._live.popitem(last=False)
            return live

    # -- playing -----------------------------------------------------------------------------

    def act(self, secret, body) -> dict:
        """Apply the person's decision in ``body``; then let the agents move. Returns the view.

        ``body``: ``{"seq": N, "hold": [positions]}`` (roll the other dice), ``{"seq": N, "row": NAME}``
        (score a row) or ``{"seq": N, "action": A}`` (a ``Yacht-v0`` action). ``seq`` is the number of
        decisions the page has seen: a request sent twice is answered once, and a page that is behind
        is told to reload instead of acting on a position it has not seen.

        Validate, coach, play, commit: nothing changes before the decision is found legal, the coach values
        the position before it is played, and the person's decision is committed with the agents' replies.
        """
        live = self.live(secret)
        with live.lock:
            seq = self._seen(live.match, body)
            if seq < len(live.match.decisions):  # the same request again: answered as the first was
                return self.view(live, since=seq, replayed=True)
            action = self._legal_action(live.match, body)
            coach = self._coach_card(live.match, action)
            record = self._play(live, action)
            moved = self._agents_move(live, [record])  # one commit: the person's decision and the agents' replies
            live.shown_at = time.monotonic()
            thinking = sum(r["seconds"] for r in moved[1:])  # the agents' own time, commits excluded
            return dict(self.view(live, since=seq, coach=coach), agent_seconds=thinking)

    def _seen(self, match: Match, body) -> int:
        """The ``seq`` of ``body``: the decisions the page has seen, the game's own count or a decision it repeats;
        else ``Refused``.
        """
        if not isinstance(body, dict):
            raise Refused("the request body must be a JSON object")
        seq = body.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
            raise Refused(f"seq must be the number of decisions the page has seen (an integer >= 0), got {echoed(seq)}")
        done = len(match.decisions)
        if seq != done and not (seq < done and self._same_decision(match, seq, body)):
            raise Refused(f"the page is behind or ahead: it has seen {seq} decisions, the game has {done}; reload", 409)
        return seq

    def _legal_action(self, match: Match, body: dict) -> int:
        """The person's decision in ``body``, as an action legal now; else ``Refused`` saying why, nothing changed."""
        seat = match.current
        if seat is None:
            raise Refused("the game is over", 409)
        if seat.kind != "human":
            raise Refused(f"it is {seat.name}'s turn, not yours", 409)
        action = self._action(seat, body, match.rules)
        reason = match.layout.why_illegal(action, seat.rolls_left, seat.open_bits, seat.hand)  # before any grading
        if reason is not None:
            raise Refused(reason)
        return action

    def _coach_card(self, match: Match, action: int) -> dict | None:
        """The coach's card on ``action`` (the person's decision, not played yet), or None when the coach is off:
        grading every decision is the report's job.
        """
        seat = match.current
        if not match.coach or seat is None:
            return None
        two_player = two_player_grading(match.rules, match.mode, len(match.seats))  # at a table of two: the solved game
        coaching = coach_decision(self.grader_for(match.rules), match, action, two_player=two_player)
        heading = decision_heading(seat.turn, seat.roll, action, seat.dice, match.rules, seat.open_bits)
        return coach_view(coaching, seat.turn, seat.roll, heading)

    def _play(self, live: GameInMemory, action: int) -> dict:
        """Play the person's legal ``action``, timed from when the position was shown; its record (not committed yet)."""
        try:
            return live.match.play(action, time.monotonic() - live.shown_at)
        except (ValueError, GameOverError) as error:
            raise Refused(str(error).splitlines()[0]) from None

    def advance(self, secret, since: int = 0) -> dict:
        """The view of a game, after letting agents make any moves still owed (after a restart)."""
        live = self.live(secret)
        with live.lock:
            self._agents_move(live)
            live.shown_at = time.monotonic()
            return self.view(live, since=since)

    def _same_decision(self, match: Match, seq: int, body: dict) -> bool:
        record = match.decisions[seq]
        if record["kind"] != "human":
            return False
        seat = match.seats[record["seat"]]
        try:
            action = self._action_at(record["dice"], record["rolls_left"], body, match.rules)
        except Refused:
            return False
        return action == record["action"] and seat.kind == "human"

    def _action(self, seat, body: dict, rules) -> int:
        return self._action_at(list(seat.dice), seat.rolls_left, body, rules)

    def _action_at(self, dice: list[int], rolls_left: int, body: dict, rules) -> int:
        num_dice = rules.num_dice
        given = [key for key in ("hold", "row", "action") if key in body]
        if len(given) != 1:
            raise Refused("say one of: hold (dice positions to keep, then roll), row (a row to score), action")
        if "hold" in body:
            hold = body["hold"]
            if not isinstance(hold, list) or not all(isinstance(p, int) and not isinstance(p, bool) for p in hold):
                raise Refused(f"hold must be a list of dice positions 0..{num_dice - 1}, got {echoed(hold)}")
            if any(not 0 <= p < num_dice for p in hold) or len(set(hold)) != len(hold):
                raise Refused(f"hold must name distinct dice positions 0..{num_dice - 1}, got {hold}")
            if len(hold) == num_dice:
                raise Refused("every die is held: release a die to roll, or score a row")
            if rolls_left == 0:
                raise Refused("no rolls left this turn: score a row")
            return sum(1 << p for p in range(num_dice) if p not in hold)
        if "row" in body:
            row = body["row"]
            if row not in rules.category_names:
                raise Refused(f"row {echoed(row)} does not exist; rows are {', '.join(rules.category_names)}")
            return ActionLayout(rules).score_action(rules.category_names.index(row))
        action = body["action"]
        num_actions = ActionLayout(rules).num_actions
        if not isinstance(action, int) or isinstance(action, bool) or not 0 <= action < num_actions:
            raise Refused(f"action must be an integer 0..{num_actions - 1}, got {echoed(action)}")
        return action

    def _agents_move(self, live: GameInMemory, pending: list[dict] = ()) -> list[dict]:
        """Let agent seats play until the person is to move or the game is over; commit their decisions.

        ``pending``: decisions just played and not yet committed (the person's); they are committed with the
        agents' in one transaction, so a request costs one commit (on SQLite, one fsync). Returns the records.
        """
        match = live.match
        records = list(pending)
        first = len(match.decisions) - len(records)
        try:
            while not match.finished and match.current.kind == "agent":
                records.append(match.play_agent())  # an agent that cannot choose is replaced (Live.guard_agents)
        except Exception:
            self.forget(live)  # memory is ahead of the database: rebuild from the rows next time
            raise
        if records:
            self._commit(live, first, records)
        return records

    def _commit(self, live: GameInMemory, first: int, records: list[dict]) -> None:
        match = live.match
        end = match.end if match.finished else None
        score, loss = self._person_result(match) if end else (None, None)
        try:
            store.append_decisions(self.engine, live.game_id, first, records, end, score, loss)
        except Exception:
            self.forget(live)  # memory is ahead of the database: rebuild from the rows next time
            raise Refused("the decision could not be saved; reload and try again", 503) from None

    def _person_result(self, match: Match) -> tuple[int, float]:
        person = next((s for s in match.seats if s.kind == "human"), match.seats[0])
        mine = [d for d in match.decisions if d["seat"] == person.index]
        loss = self.grader_for(match.rules).grade(mine).loss
        return person.total, float(loss.mean()) if len(loss) else 0.0

    # -- what a browser sees -----------------------------------------------------------------

    def view(self, live: GameInMemory, since: int = 0, coach: dict | None = None, replayed: bool = False) -> dict:
        """What the page sees: the position, the sheets, and the decisions from number ``since`` on."""
        match = live.match
        rules = match.rules
        seat = match.current
        current = None
        if seat is not None:
            current = {
                "seat": seat.index,
                "name": seat.name,
                "kind": seat.kind,
                "turn": seat.turn,
                "roll": seat.roll,
                "rolls_left": seat.rolls_left,
            }
            if seat.kind == "human":  # an agent's dice are shown through its decisions only
                current["dice"] = list(seat.dice)
                current["now"] = now_points(rules, seat.dice, seat.open_bits)  # the joker rule followed
        since = max(0, min(int(since), len(match.decisions)))
        return {
            "game": {
                "mode": match.mode,
                "coach": match.coach,
                "started": match.header["time"],
                "players": [
                    {"seat": s.index, "name": s.name, "kind": s.kind, "policy": self.shown_name(s.player.policy)}
                    for s in match.seats
                ],
            },
            "rules": rules_view(rules),
            "rows": [{"name": c.name, "title": c.title} for c in rules.categories],
            "seq": len(match.decisions),
            "since": since,
            "current": current,
            "sheets": [sheet_view(s) for s in match.seats],
            "events": [public_decision(d, rules) for d in match.decisions[since:]],
            "finished": match.finished,
            "winners": match.winners if match.finished else None,
            "coach": coach,
            "replayed": replayed,
            "replaced": list(live.replaced),  # agents the server had to replace in this game, and why
        }

    def summary(self, secret) -> dict:
        """The game-over page: sheets, winners, each seat's grade, loss per turn, worst decisions."""
        live = self.live(secret)
        with live.lock:
            match = live.match
            if not match.finished:
                raise Refused("the game is not over yet", 409)
            record = match.game_record()
            grader = self.grader_for(match.rules)
            graded = grader.grade(record.decisions)
        reports = {r.name: r for r in report_players([record], grader, worst=5)}
        note = grade_chances(list(reports.values()), [record], match.rules, worst=5)  # at a table of two
        seats = []
        for seat in match.seats:
            report = reports.get(seat.name)
            seats.append(
                {
                    **sheet_view(seat),
                    "name": seat.name,
                    "kind": seat.kind,
                    "decisions": report.decisions,
                    "reroll_decisions": report.reroll_decisions,
                    "row_decisions": report.row_decisions,
                    "loss_per_decision": finite(report.loss_per_decision),
                    "loss_per_reroll": finite(report.loss_per_reroll),
                    "loss_per_row": finite(report.loss_per_row),
                    "loss_total": float(sum(report.losses_per_game)) if report.losses_per_game else 0.0,
                    "loss_by_turn": [finite(t["loss_per_game"]) for t in report.by_turn],
                    "worst": [
                        {
                            "turn": w["turn"],
                            "roll": w["roll"],
                            "dice": w["dice"],
                            "chosen": w["chosen"],
                            "best": w["best"],
                            "loss": w["loss"],
                        }
                        for w in report.worst
                    ],
                    # at a table of two: the drop in chance of winning against the solved game, percentage points
                    "win_decisions": report.win_decisions,
                    "win_loss_per_decision": finite(report.win_loss_per_decision),
                    "win_loss_per_game": finite(report.win_loss_per_game),
                    "win_worst": report.win_worst,
                }
            )
        turns = duplicate_turns(match, graded.loss) if match.mode == "duplicate" else None
        return {
            "mode": match.mode,
            "rules": rules_view(match.rules),
            "rows": [{"name": c.name, "title": c.title} for c in match.rules.categories],
            "seats": seats,
            "winners": match.winners,
            "optimum": grader.solution.expected_score,
            "turns": turns,
            "win_note": note,  # why a table of two is not graded in chances of winning (how to compute the solution)
        }

    def history(self, name) -> dict:
        """A person's games, newest first, with scores and grades; each says whether it was imported (and
        ``imported`` counts those), since the server vouches only for the games played on it.
        """
        name = player_name(name)  # the same checks and the same spacing as the name a game was started under
        import json

        games = []
        for row in store.player_games(self.engine, name):
            header = json.loads(row.header)
            end = json.loads(row.end_record) if row.end_record else None
            games.append(
                {
                    "started": row.created,
                    "mode": row.mode,
                    "coach": row.coach,
                    "rules": header["rules"],
                    "rules_title": rule_set_title(header["rules"]),
                    "opponents": [p["name"] for p in header["players"] if p["kind"] == "agent"],
                    "finished": row.finished is not None,
                    "score": row.score,
                    "won": (header["players"][0]["name"] in end["winners"]) if end else None,
                    "totals": end["totals"] if end else None,
                    "loss_per_decision": row.loss,
                    "imported": bool(row.imported),  # brought in from a record file by yacht import, not played here
                    # finished games can be viewed by anyone with the name; a running game stays with its owner
                    "link": f"/game/{row.secret}" if row.finished else None,
                }
            )
        return {"name": name, "games": games, "imported": sum(g["imported"] for g in games)}


class LockedPolicy:
    """A policy whose ``act`` runs under a lock: games run in worker threads and share one policy object, which
    need not be thread-safe (sb3's ``predict`` keeps the masked distribution on the policy: two games at once
    could mix one game's mask with the other's logits).
    """

    def __init__(self, policy):
        self.policy = policy
        self.lock = threading.Lock()

    def act(self, observation, action_mask) -> int:
        """The policy's action, one caller at a time."""
        with self.lock:
            return self.policy.act(observation, action_mask)

    def act_batch(self, observations, action_masks):
        """The policy's actions for a batch, one caller at a time."""
        with self.lock:
            return self.policy.act_batch(observations, action_masks)

    def __getattr__(self, name):
        return getattr(self.policy, name)


def warm_up(policy, rules) -> None:
    """One decision on a throwaway position, so that compiling (numba, torch) happens now, not in a player's game."""
    from yacht_env.env import YachtEnv
    from yacht_env.game import GameBatch, draw_table_dice
    from yacht_env.table.encoding import policy_observations

    table_encoding = getattr(policy, "table_encoding", None)
    if table_encoding is not None:  # a policy that reads the table (target:T) sees a table of its size
        game = GameBatch(rules, table_encoding.num_players)
        game.start(draw_table_dice(np.random.default_rng(0), rules, table_encoding.num_players)[None])
        policy.act_batch(policy_observations(policy, game, [0], [0]), game.legal_masks([0]))
        return
    env = YachtEnv(rules=rules, observation_encoding=policy.encoding.name)
    observation, _ = env.reset(seed=0)
    policy.act(observation, env.action_masks())


def resume(game: GameRecord, policies: dict | None = None, agents: bool = True, dice_as_recorded: bool = False) -> Match:
    """The match of a stored game, replayed with the project's rules (and ``policies`` for its agent seats);
    ``dice_as_recorded`` as :meth:`Match.resume` takes it.
    """
    try:
        return Match.resume(game, policies=policies, agents=agents, dice_as_recorded=dice_as_recorded)
    except RecordError as error:
        raise Refused(f"game {game.game_id} cannot be replayed: {error}", 500) from None


def finite(value: float) -> float | None:
    """None for NaN (JSON has no NaN)."""
    return None if value is None or math.isnan(value) else float(value)


def public_decision(record: dict, rules) -> dict:
    """A decision as a browser sees it: no seed. ``points`` is what the total gained (bonuses in),
    ``row_points`` what the row holds.
    """
    scored = record["points"] is not None
    return {
        "seat": record["seat"],
        "player": record["player"],
        "kind": record["kind"],
        "turn": record["turn"],
        "roll": record["roll"],
        "dice": record["dice"],
        "rolls_left": record["rolls_left"],
        "action": record["action"],
        "label": decision_label(record, rules),
        "points": record["points"],
        "row_points": row_points(record["action"] - rules.dice.num_rerolls, record["dice"], rules, record["open"])
        if scored
        else None,
        "total": record["total"],
        "row": None if record["points"] is None else rules.category_names[record["action"] - rules.dice.num_rerolls],
        "rerolled": [] if record["points"] is not None else list(rules.dice.reroll_positions[record["action"]]),
    }


def decision_heading(turn: int, roll: int, action: int, dice, rules, open_rows=None) -> str:
    """The decision a coach's card grades, with its turn and roll: ``Turn 5, after roll 2: keep 3 3`` or
    ``Turn 5, after roll 3: scored 12 in Fours`` (a card left on screen while the game moves on says which it was).
    """
    first_score = rules.dice.num_rerolls
    if action < first_score:
        return f"Turn {turn}, after roll {roll}: {choice_label(action, dice, rules, open_rows)}"
    row = action - first_score
    points = row_points(row, dice, rules, open_rows)
    return f"Turn {turn}, after roll {roll}: scored {points} in {rules.categories[row].title}"


def coach_view(coaching: Coaching, turn: int, roll: int, decision: str) -> dict:
    """The coach's card on a decision just made, as the page shows it: :func:`yacht_play.coach.coach_decision`'s
    verdict with the first ``COACH_OPTIONS`` options, and where it was (``turn``, ``roll``, the ``decision``
    as :func:`decision_heading` names it, for a card left on screen while the game moves on).

    Each option's ``win`` is its chance of winning the game at hand (None without). At a table of two:
    ``win_exact``, the best decision to win ``win_best`` and its chance ``win_best_chance``, and ``win_loss``,
    the chance of winning the decision gave away (all in [0, 1]); or ``win_note``, the line saying how to
    compute the solved game. ``win_learned``: the chances are a shipped table planner's, learned, not exact.
    ``learned_win_label`` (``"learned win"``): beside exact or ``win``'s chances, a shipped table planner's
    learned ones too: each option's ``learned_win`` and the chosen one's ``chosen_learned_win``, in [0, 1].
    """
    win = coaching.win_grade
    exact = {}
    if win is not None:
        exact = {"win_exact": True, "win_best": win.best, "win_best_chance": win.best_chance, "win_loss": win.loss}
    view = {
        **exact,
        "dice": list(coaching.dice),
        "chosen": coaching.chosen,
        "chosen_expected": coaching.chosen_expected,
        "chosen_win": coaching.chosen_chance,
        "best": coaching.best,
        "best_expected": coaching.best_expected,
        "loss": coaching.loss,
        "options": [option_view(option) for option in coaching.options[:COACH_OPTIONS]],
        "turn": turn,
        "roll": roll,
        "decision": decision,
    }
    if coaching.win_note is not None:
        view["win_note"] = coaching.win_note
    if coaching.chances_label == LEARNED_LABEL:
        view["win_learned"] = True  # the chances are a shipped table planner's, learned in self-play: not exact
    if coaching.chosen_learned_chance is not None:  # a second figure, learned in self-play: not exact
        view["learned_win_label"] = LEARNED_LABEL
        view["chosen_learned_win"] = coaching.chosen_learned_chance
    return view


def option_view(option: Option) -> dict:
    """One option of the coach's card: its label, expected final score, chance of winning (``win``, None without),
    whether it was chosen, and its ``learned_win`` where a shipped table planner's learned chance is shown beside.
    """
    view = {"label": option.label, "expected": option.expected, "win": option.chance, "chosen": option.chosen}
    if option.learned_chance is not None:
        view["learned_win"] = option.learned_chance
    return view


def duplicate_turns(match: Match, losses: np.ndarray) -> list[dict]:
    """Turn by turn on the same dice: each seat's row, points, running total and the loss of its decisions."""
    rules = match.rules
    turns = [
        {"turn": t, "seats": [{"row": None, "points": None, "total": 0, "loss": 0.0} for _ in match.seats]}
        for t in range(1, rules.num_turns + 1)
    ]
    for i, d in enumerate(match.decisions):
        cell = turns[d["turn"] - 1]["seats"][d["seat"]]
        cell["loss"] += float(losses[i])
        if d["points"] is not None:
            cell.update(row=rules.categories[d["action"] - rules.dice.num_rerolls].title, points=d["points"], total=d["total"])
    return turns
