"""The web table and the replay page in a real browser: headless Chromium (Debian's chromium
and chromium-driver, driven by Selenium; gofish_web.browser) plays whole games through the
page, checks what it shows against the engine's state, and takes screenshots."""

from __future__ import annotations

import copy
import random

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from gofish_env import Game, IllegalAsk, Rules
from gofish_env.cards import RANK_NAMES
from gofish_env.events import Draw, EmptyHandDraw
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.replay import Replay
from gofish_env.scene import seat_scene, table_scene
from gofish_web.browser import chromium
from gofish_web.replay_page import write_page
from gofish_web.server import create_app, running
from gofish_web.tables import TableRegistry

pytestmark = [pytest.mark.web, pytest.mark.browser]
WAIT = 60  # seconds for the page to get somewhere


@pytest.fixture(scope="module")
def browser():
    with chromium() as driver:
        yield driver


@pytest.fixture
def site(tmp_path):
    registry = TableRegistry(replays=tmp_path / "replays")
    with running(create_app(registry, replays=tmp_path / "replays")) as url:
        yield url, registry


def wait_for(driver, condition, timeout=WAIT):
    def check(driver):
        try:
            return condition(driver)
        except StaleElementReferenceException:  # the page redrew meanwhile
            return False

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(check)


def texts(driver, selector: str) -> list[str]:
    return [node.text for node in driver.find_elements(By.CSS_SELECTOR, selector)]


def log_lines(driver, selector: str = "#log > div") -> list[str]:
    """The log's sentences, without the notes of private draws beside them."""
    script = (
        "return [...document.querySelectorAll(arguments[0])].map(n => n.firstChild.textContent)"
    )
    return driver.execute_script(script, selector)


def cards_in(driver, selector: str) -> list[str]:
    nodes = driver.find_elements(By.CSS_SELECTOR, f"{selector} [data-card]")
    return [node.get_attribute("data-card") for node in nodes]


def set_speed(driver, milliseconds: int) -> None:
    driver.execute_script(
        "const s = document.getElementById('speed'); s.value = arguments[0];"
        "s.dispatchEvent(new Event('input'));",
        milliseconds,
    )


def deal(driver, url: str, players: int, seed: int, mode: str = "play", cpus=()) -> None:
    driver.get(url + "/")
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#players option"))
    Select(driver.find_element(By.ID, "players")).select_by_value(str(players))
    Select(driver.find_element(By.ID, "mode")).select_by_value(mode)
    for seat, level in cpus:
        Select(driver.find_element(By.ID, f"seat-{seat}")).select_by_value(level)
    driver.find_element(By.ID, "seed").send_keys(str(seed))
    driver.find_element(By.ID, "deal").click()
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".gf-table"))
    set_speed(driver, 0)


def check_page_against_engine(driver, game: Game, seat: int) -> None:
    """The page shows the seat's own cards, the other hands as counts, the pool, the
    catches and the log, as the engine has them, and no other seat's card."""
    assert cards_in(driver, ".gf-me") == game.hand(seat)
    others = driver.find_elements(By.CSS_SELECTOR, ".gf-seat")
    assert sorted(int(node.get_attribute("data-seat")) for node in others) == sorted(
        s for s in range(game.players) if s != seat
    )
    for node in others:
        other = int(node.get_attribute("data-seat"))
        assert not node.find_elements(By.CSS_SELECTOR, "[data-card]")
        count = node.find_element(By.CSS_SELECTOR, "[data-count]").get_attribute("data-count")
        assert int(count) == game.hand_size(other)
        chips = [chip.text for chip in node.find_elements(By.CSS_SELECTOR, ".gf-chip")]
        assert chips == [RANK_NAMES[rank] for rank in game.catches(other)]
    pool = driver.find_element(By.CSS_SELECTOR, "[data-pool]").get_attribute("data-pool")
    assert int(pool) == game.pool_size
    assert log_lines(driver) == [str(event) for event in game.events]


def error_message(driver) -> str | None:
    """The error the page shows, if any."""
    message = driver.find_element(By.ID, "message")
    return message.text if message.get_attribute("data-error") else None


def my_turn_or_over(driver) -> str | None:
    if driver.find_elements(By.CSS_SELECTOR, ".gf-me.gf-to-move"):
        return "turn"
    status = driver.find_element(By.CSS_SELECTOR, ".gf-status").text
    return "over" if status.startswith("Game over") else None


def test_a_person_plays_a_whole_game_against_a_cpu_in_the_browser(browser, site, tmp_path):
    url, registry = site
    deal(browser, url, players=3, seed=7, cpus=[(1, "hard"), (2, "easy")])
    (table,) = registry._tables.values()
    game = table.game
    chooser = random.Random(7)
    turns = 0
    refused = False
    while (state := wait_for(browser, my_turn_or_over)) == "turn":
        check_page_against_engine(browser, game, 0)
        target, rank = chooser.choice(game.legal_asks())
        name = RANK_NAMES[rank]
        card = next(c for c in game.hand(0) if c[:-1] == name)
        browser.find_element(By.CSS_SELECTOR, f".gf-me [data-card='{card}']").click()
        legal = {
            int(n.get_attribute("data-seat"))
            for n in browser.find_elements(By.CSS_SELECTOR, ".gf-legal")
        }
        assert legal == {t for t, r in game.legal_asks() if r == rank}
        if not refused:  # an illegal click: asking yourself; the engine's reason is shown
            with pytest.raises(IllegalAsk) as reason:
                copy.deepcopy(game).ask(0, name)
            browser.find_element(By.CSS_SELECTOR, ".gf-me .gf-label").click()
            message = wait_for(browser, error_message)
            assert message == f"Not allowed: {reason.value}"
            refused = True
        events = game.num_events
        browser.find_element(By.CSS_SELECTOR, f".gf-seat[data-seat='{target}']").click()
        wait_for(
            browser, lambda d, n=events: len(d.find_elements(By.CSS_SELECTOR, "#log > div")) > n
        )
        turns += 1
    assert state == "over" and game.is_over and turns >= 3 and refused
    status = browser.find_element(By.CSS_SELECTOR, ".gf-status").text
    assert status == table.payload()["scene"]["status"]
    winners = {
        int(n.get_attribute("data-seat"))
        for n in browser.find_elements(By.CSS_SELECTOR, ".gf-winner")
    }
    assert winners == set(game.winners)
    assert texts(browser, "#links a") == ["Replay this game", "download the replay"]
    shot = tmp_path / "table.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 20_000


def test_watching_cpus_play_to_the_end_from_any_view(browser, site):
    url, registry = site
    deal(browser, url, players=4, seed=3, mode="watch")
    (table,) = registry._tables.values()
    Select(browser.find_element(By.ID, "view")).select_by_value("2")
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".gf-me[data-seat='2']"))
    Select(browser.find_element(By.ID, "view")).select_by_value("table")
    wait_for(browser, lambda d: my_turn_or_over(d) == "over")
    game = table.game
    assert game.is_over
    shown = {
        int(node.get_attribute("data-seat")): cards_in(
            browser, f".gf-seat[data-seat='{node.get_attribute('data-seat')}']"
        )
        for node in browser.find_elements(By.CSS_SELECTOR, ".gf-seat")
    }
    assert shown == {seat: game.hand(seat) for seat in range(4)}
    assert len(texts(browser, "#log > div")) == game.num_events


def test_the_lobby_deals_a_seed_above_2_to_the_53_exactly(browser, site):
    """The server's own seeds (63 bits) are shown on replay pages; typed back into the
    lobby, the same seed deals the same game (a JavaScript number would round it)."""
    url, registry = site
    seed = 2**62 + 1  # a JavaScript number would be 2**62: another deal
    deal(browser, url, players=2, seed=seed, mode="watch")
    (table,) = registry._tables.values()
    assert table.seed == seed
    assert table.game.start_position() == Game(Rules(players=2), seed=seed).start_position()


def played_replay(seed: int) -> tuple[Replay, list[Game]]:
    """A replay, and the game as it stood after the deal and after each ask."""
    rules = Rules(players=3)
    game = Game(rules, seed=seed)
    chooser = random.Random(seed)
    states = [copy.deepcopy(game)]
    while not game.is_over:
        game.ask(*chooser.choice(game.legal_asks()))
        states.append(copy.deepcopy(game))
    return Replay.from_game(game, seed=seed, players=["you", "hard", "easy"]), states


def test_the_replay_page_steps_forward_and_back(browser, tmp_path):
    replay, states = played_replay(seed=12)
    page = write_page(replay, tmp_path / "game.html")
    browser.get(page.as_uri())

    def step() -> int:
        return int(browser.find_element(By.ID, "step-label").get_attribute("data-step"))

    def check(number: int, view) -> None:
        game = states[number]
        assert step() == number
        pool = browser.find_element(By.CSS_SELECTOR, "[data-pool]").get_attribute("data-pool")
        assert int(pool) == game.pool_size
        if view == "table":
            for seat in range(3):
                assert cards_in(browser, f".gf-seat[data-seat='{seat}']") == game.hand(seat)
        else:
            assert cards_in(browser, ".gf-me") == game.hand(view)
            assert not browser.find_elements(By.CSS_SELECTOR, ".gf-seat [data-card]")
        # The status line as the engine words it for these eyes ("Your turn", "you win").
        labels = replay.players
        if view == "table":
            eyes = table_scene(game, labels)
        else:
            eyes = seat_scene(KnowledgeTracker(game).view(view), [], labels)
        assert browser.find_element(By.CSS_SELECTOR, ".gf-status").text == eyes.status
        shown = log_lines(browser, "#log > div:not(.gf-future)")
        assert shown == [str(event) for event in game.events]
        # Private draws are noted for the drawer's eyes only (and with every hand face up).
        draws = [
            e.seat
            for e in game.events
            if (type(e) is Draw and not e.shown) or type(e) is EmptyHandDraw
        ]
        notes = texts(browser, "#log > div:not(.gf-future) .gf-note")
        if view == "table":
            assert len(notes) == len(draws)
        else:
            assert len(notes) == draws.count(view)
            assert all(note.startswith("(you drew ") for note in notes)

    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".gf-table"))
    check(0, "table")
    forward = browser.find_element(By.ID, "forward")
    for number in range(1, 6):
        forward.click()
        check(number, "table")
    browser.find_element(By.ID, "back").click()
    check(4, "table")
    Select(browser.find_element(By.ID, "view")).select_by_value("1")
    check(4, 1)
    browser.find_element(By.TAG_NAME, "body").send_keys("\ue014")  # the right arrow key
    check(5, 1)
    browser.find_element(By.ID, "last").click()
    check(len(states) - 1, 1)
    assert browser.find_element(By.ID, "forward").get_attribute("disabled")
    browser.find_element(By.ID, "first").click()
    check(0, 1)
    shot = tmp_path / "replay.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 20_000
    # An address names a step and a view; a step that is not a whole number is cut to one.
    for address, (number, view) in {"step=3&view=1": (3, 1), "step=2.5&view=2": (2, 2)}.items():
        browser.get("about:blank")
        browser.get(f"{page.as_uri()}#{address}")
        wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".gf-table"))
        check(number, view)


def test_labels_that_look_like_markup_are_shown_as_text(browser, tmp_path):
    """The page's data sits in a <script> element: a label such as "<!--<script>" made the
    HTML parser run the element past its end, and the page showed nothing."""
    replay, _ = played_replay(seed=5)
    replay.players = ["Ann <!--<script>", "</script><b>&amp;", "Cy"]
    page = write_page(replay, tmp_path / "markup.html")
    browser.get(page.as_uri())
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".gf-table"))
    assert browser.find_element(By.ID, "heading").text == "Go Fish replay"
    views = [option.text for option in Select(browser.find_element(By.ID, "view")).options]
    assert views[1:] == [f"Seat {seat}'s eyes ({name})" for seat, name in enumerate(replay.players)]
    assert not browser.find_elements(By.TAG_NAME, "b")


def test_a_replay_file_opens_from_the_web_page(browser, site, tmp_path):
    url, _ = site
    replay, states = played_replay(seed=13)
    path = replay.save(tmp_path / "mine.json")
    browser.get(url + "/")
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#players option"))
    browser.find_element(By.ID, "replay-file").send_keys(str(path))
    wait_for(browser, lambda d: "/replays/opened-" in d.current_url)
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".gf-table"))
    browser.find_element(By.ID, "last").click()
    pool = browser.find_element(By.CSS_SELECTOR, "[data-pool]").get_attribute("data-pool")
    assert int(pool) == states[-1].pool_size
    assert len(texts(browser, "#log > div")) == states[-1].num_events


def test_exact_card_asks_pick_a_suit_in_the_browser(browser, site):
    url, registry = site
    browser.get(url + "/")
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#players option"))
    Select(browser.find_element(By.ID, "players")).select_by_value("2")
    Select(browser.find_element(By.ID, "rules")).select_by_value("authors")
    browser.find_element(By.ID, "seed").send_keys("4")
    browser.find_element(By.ID, "deal").click()
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".gf-table"))
    set_speed(browser, 0)
    (table,) = registry._tables.values()
    game = table.game
    asked = 0
    while asked < 3 and wait_for(browser, my_turn_or_over) == "turn":
        check_page_against_engine(browser, game, 0)
        target, wanted = game.legal_asks()[0]
        card = table.wanted_name(wanted)  # e.g. "QH": a card of a rank the seat holds
        mine = next(c for c in game.hand(0) if c[:-1] == card[:-1])
        browser.find_element(By.CSS_SELECTOR, f".gf-me [data-card='{mine}']").click()
        if asked == 0:  # a card the seat holds itself: the engine refuses it
            browser.find_element(By.CSS_SELECTOR, f"#suits [data-suit='{mine[-1]}']").click()
            with pytest.raises(IllegalAsk) as reason:
                copy.deepcopy(game).ask(target, mine)
            browser.find_element(
                By.CSS_SELECTOR, f".gf-seat[data-seat='{target}'] .gf-label"
            ).click()
            message = wait_for(browser, error_message)
            assert message == f"Not allowed: {reason.value}"
        browser.find_element(By.CSS_SELECTOR, f"#suits [data-suit='{card[-1]}']").click()
        events = game.num_events
        browser.find_element(By.CSS_SELECTOR, f".gf-seat[data-seat='{target}'] .gf-label").click()
        wait_for(
            browser, lambda d, n=events: len(d.find_elements(By.CSS_SELECTOR, "#log > div")) > n
        )
        ask = game.events[events]
        assert (ask.asker, ask.target, ask.card) == (0, target, wanted)
        asked += 1
    assert asked == 3


FOCUSED = """
const node = document.activeElement;
if (!node || !node.closest("#table")) return null;
return {tag: node.tagName, card: node.dataset.card || null, seat: node.dataset.seat ?? null,
        role: node.getAttribute("role") || node.tagName.toLowerCase(),
        name: node.getAttribute("aria-label"), outline: getComputedStyle(node).outlineStyle};
"""


def press(driver, key: str) -> dict | None:
    """Press a key (at whatever has the focus); what has the focus then, if in the table."""
    ActionChains(driver).send_keys(key).perform()
    return driver.execute_script(FOCUSED)


def tab_round(driver) -> list[dict]:
    """Every control of the table Tab reaches, in order: from the bar above the table (its
    last button) until the focus leaves the table."""
    driver.execute_script("document.getElementById('next').focus()")
    seen = []
    for _ in range(80):
        here = press(driver, Keys.TAB)
        if here is None:
            return seen
        seen.append(here)
    raise AssertionError(f"Tab did not leave the table: {seen}")


def tab_to(driver, wanted) -> dict:
    for _ in range(80):
        here = press(driver, Keys.TAB)
        if here is not None and wanted(here):
            return here
    raise AssertionError("Tab never reached it")


def test_a_turn_is_played_with_the_keyboard_only(browser, site):
    url, registry = site
    deal(browser, url, players=3, seed=7, cpus=[(1, "hard"), (2, "easy")])
    (table,) = registry._tables.values()
    game = table.game
    suits = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
    words = {"J": "jack", "Q": "queen", "K": "king", "A": "ace"}
    asked = 0
    while asked < 2 and wait_for(browser, my_turn_or_over) == "turn":
        # Before a card is picked, Tab goes through the person's cards, named, and no seat.
        controls = tab_round(browser)
        assert [c["card"] for c in controls] == game.hand(0)
        for control in controls:
            rank, suit = control["card"][:-1], control["card"][-1]
            assert control["role"] == "button"
            assert control["name"] == f"{words.get(rank, rank)} of {suits[suit]}"
            assert control["outline"] != "none"  # the focus shows
        target, rank = game.legal_asks()[asked]
        card = next(c for c in game.hand(0) if c[:-1] == RANK_NAMES[rank])
        tab_to(browser, lambda here, card=card: here["card"] == card)
        here = press(browser, Keys.ENTER if asked == 0 else Keys.SPACE)
        assert here["card"] == card  # the focus stays on the card picked
        selected = browser.find_element(By.CSS_SELECTOR, f".gf-me [data-card='{card}']")
        assert "gf-selected" in selected.get_attribute("class")
        # Now the seats that may be asked for the rank are controls too, after the cards.
        seats = [c for c in tab_round(browser) if c["card"] is None]
        legal = sorted(t for t, r in game.legal_asks() if r == rank)
        assert [int(c["seat"]) for c in seats] == legal
        for control in seats:
            seat = int(control["seat"])
            assert control["role"] == "button"
            assert control["name"] == f"ask seat {seat} ({table.labels[seat]})"
            assert control["outline"] != "none"
        events = game.num_events
        tab_to(browser, lambda here, target=target: here["seat"] == str(target))
        press(browser, Keys.SPACE if asked == 0 else Keys.ENTER)
        wait_for(
            browser, lambda d, n=events: len(d.find_elements(By.CSS_SELECTOR, "#log > div")) > n
        )
        ask = game.events[events]
        assert (ask.asker, ask.target, ask.rank) == (0, target, rank)
        assert error_message(browser) is None
        asked += 1
    assert asked == 2


def play_one_ask(driver, game: Game) -> None:
    """The person's ask, clicked: the first legal one."""
    target, rank = game.legal_asks()[0]
    card = next(c for c in game.hand(0) if c[:-1] == RANK_NAMES[rank])
    events = game.num_events
    driver.find_element(By.CSS_SELECTOR, f".gf-me [data-card='{card}']").click()
    driver.find_element(By.CSS_SELECTOR, f".gf-seat[data-seat='{target}']").click()
    wait_for(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#log > div")) > events)


def shows_the_engine(driver, game: Game, seat: int) -> bool:
    try:
        check_page_against_engine(driver, game, seat)
    except AssertionError:
        return False
    return True


def test_a_second_window_on_the_same_table_follows_it(browser, site):
    url, registry = site
    deal(browser, url, players=3, seed=7, cpus=[(1, "hard"), (2, "easy")])
    (table,) = registry._tables.values()
    game = table.game
    address = browser.current_url
    wait_for(browser, my_turn_or_over)
    with chromium() as other:
        other.get(address)  # the same table in another browser: nothing is done in it
        wait_for(other, lambda d: d.find_elements(By.CSS_SELECTOR, ".gf-me.gf-to-move"))
        check_page_against_engine(other, game, 0)
        for _ in range(2):
            play_one_ask(browser, game)
            assert wait_for(browser, my_turn_or_over) == "turn"
            wait_for(other, lambda d: shows_the_engine(d, game, 0), timeout=5)
            assert error_message(other) is None
            hint = other.find_element(By.ID, "message").text
            assert hint.startswith("Your turn: pick one of your cards")
        # A page that has not yet noticed the game moved on (its polling stopped here) is
        # refused the ask it invites, says so, and shows the table as it is now.
        other.execute_script(
            "window.setTimeout = () => 0;for (let id = 0; id < 100000; id++) clearTimeout(id);"
        )
        play_one_ask(browser, game)
        assert wait_for(browser, my_turn_or_over) == "turn"
        events = game.num_events
        stale = other.find_element(By.CSS_SELECTOR, ".gf-me [data-card]")
        stale.click()
        other.find_element(By.CSS_SELECTOR, ".gf-legal").click()
        message = wait_for(other, error_message, timeout=10)
        assert "moved on" in message
        assert game.num_events == events  # nothing was asked
        check_page_against_engine(other, game, 0)
