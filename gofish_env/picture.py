"""The table drawn as an RGB image (the envs' ``render_mode="rgb_array"``), with Pillow.

``draw(scene)`` draws a ``gofish_env.scene.Scene``: the seats around a felt table (the
viewer at the bottom, the others going left = clockwise), card backs with counts for hidden
hands, the viewer's cards face up, every seat's catches and points, the pool, whose turn it
is, and the last ask with its answer. It returns a ``(640, 960, 3)`` uint8 array.

A frame is cheap (docs/performance.md): the table, every card face, back and catch chip
are drawn once and cached; a frame copies the table, pastes sprites and writes a few lines
of text. Text uses the font bundled with Pillow, so frames look the same on any machine.
"""

from __future__ import annotations

import math
from functools import cache, lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from gofish_env.scene import Scene, SeatScene

WIDTH, HEIGHT = 960, 640  # both multiples of 16, as video encoders want
FELT = (39, 110, 68)
FELT_EDGE = (92, 58, 33)
BACKGROUND = (24, 38, 30)
PANEL = (30, 84, 52)
PANEL_TURN = (240, 196, 64)
WHITE = (245, 245, 240)
MUTED = (190, 210, 195)
RED = (200, 40, 40)
BLACK = (25, 25, 25)
BACK = (32, 78, 150)
HIT = (150, 230, 150)
MISS = (255, 190, 120)

BIG = (54, 76)  # the viewer's cards
SMALL = (34, 48)  # hidden hands' backs and the table view's faces
CHIP = (18, 24)  # a catch
PANEL_SIZE = (214, 116)
CENTER = (480, 285)
RADII = (352, 192)
SUPERSAMPLE = 4  # sprites are drawn this much larger, then shrunk (smooth edges)


@cache
def font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


@lru_cache(maxsize=8192)
def text_width(text: str, size: int) -> float:
    return font(size).getlength(text)


@lru_cache(maxsize=8192)
def _word_mask(word: str, size: int) -> tuple[Image.Image, int, int]:
    """A word drawn once as a mask: FreeType takes far longer than a paste, and the table's
    words ("Seat", "asks", "queens", ...) come back every frame."""
    left, top, right, bottom = font(size).getbbox(word)
    mask = Image.new("L", (max(1, right - left), max(1, bottom - top)))
    ImageDraw.Draw(mask).text((-left, -top), word, fill=255, font=font(size))
    return mask, left, top


def _space(size: int) -> float:
    return max(text_width(" ", size), 0.3 * size)  # the font's own space is thin


def line_width(text: str, size: int) -> float:
    """The width ``write`` gives a line of text."""
    words = text.split()
    return sum(text_width(word, size) for word in words) + _space(size) * (len(words) - 1)


@lru_cache(maxsize=4096)
def _line_mask(text: str, size: int) -> tuple[Image.Image, int, float]:
    """A line of text as one mask, put together from its words' masks (labels, counts and
    most answers come back frame after frame): (mask, its top offset, its width)."""
    words = text.split()
    space = _space(size)
    widths = [text_width(word, size) for word in words]
    masks = [_word_mask(word, size) for word in words]
    top = min(word_top for _, _, word_top in masks)
    bottom = max(word_top + mask.height for mask, _, word_top in masks)
    width = sum(widths) + space * (len(words) - 1)
    line = Image.new("L", (round(width) + 2, bottom - top))
    x = 0.0
    for (mask, left, word_top), advance in zip(masks, widths, strict=True):
        line.paste(mask, (round(x) + left, word_top - top))
        x += advance + space
    return line, top, width


def write(
    image: Image.Image, xy: tuple[float, float], text: str, size: int, color, align: str = "left"
) -> None:
    """Text with its top (ascender) at y, starting at x, centred on x (``align="center"``)
    or ending at x (``"right"``)."""
    if not text.strip():
        return
    mask, top, width = _line_mask(text, size)
    x, y = xy
    if align != "left":
        x -= width / (2 if align == "center" else 1)
    image.paste(color, (round(x), round(y) + top), mask)


# ---------------------------------------------------------------------- sprites


def _suit(draw: ImageDraw.ImageDraw, suit: str, x: float, y: float, s: float, color) -> None:
    """A suit symbol filling the square (x, y, s): drawn as shapes, no font needed."""
    cx = x + s / 2

    def circle(px: float, py: float, r: float) -> None:
        draw.ellipse((px - r, py - r, px + r, py + r), fill=color)

    if suit == "D":
        draw.polygon(
            [(cx, y), (x + s * 0.85, y + s / 2), (cx, y + s), (x + s * 0.15, y + s / 2)], color
        )
    elif suit == "H":
        circle(x + s * 0.28, y + s * 0.33, s * 0.24)
        circle(x + s * 0.72, y + s * 0.33, s * 0.24)
        draw.polygon(
            [(x + s * 0.05, y + s * 0.42), (x + s * 0.95, y + s * 0.42), (cx, y + s)], color
        )
    elif suit == "S":
        draw.polygon([(cx, y), (x + s * 0.95, y + s * 0.58), (x + s * 0.05, y + s * 0.58)], color)
        circle(x + s * 0.28, y + s * 0.6, s * 0.23)
        circle(x + s * 0.72, y + s * 0.6, s * 0.23)
        draw.polygon([(cx, y + s * 0.6), (x + s * 0.72, y + s), (x + s * 0.28, y + s)], color)
    else:  # clubs
        circle(cx, y + s * 0.26, s * 0.22)
        circle(x + s * 0.26, y + s * 0.58, s * 0.22)
        circle(x + s * 0.74, y + s * 0.58, s * 0.22)
        circle(cx, y + s * 0.5, s * 0.12)
        draw.polygon([(cx, y + s * 0.5), (x + s * 0.72, y + s), (x + s * 0.28, y + s)], color)


def _blank(size: tuple[int, int], fill, outline) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    k = SUPERSAMPLE
    w, h = size[0] * k, size[1] * k
    image = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((0, 0, w - 1, h - 1), radius=w // 9, fill=fill, outline=outline, width=k)
    return image, draw


def _shrink(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    return image.resize(size, Image.Resampling.LANCZOS)


@cache
def card_face(card: str, size: tuple[int, int]) -> Image.Image:
    """A face-up card: rank and suit in the corner, a large suit in the middle."""
    image, draw = _blank(size, WHITE, (120, 120, 120))
    w, h = image.size
    if card == "JK":
        text_font = font(int(h * 0.3))
        draw.text((w / 2, h / 2), "JK", fill=(120, 40, 160), font=text_font, anchor="mm")
        return _shrink(image, size)
    rank, suit = card[:-1], card[-1]
    color = RED if suit in "HD" else BLACK
    corner = font(int(h * (0.26 if len(rank) == 1 else 0.23)))
    draw.text((w * 0.07, h * 0.04), rank, fill=color, font=corner)
    _suit(draw, suit, w * 0.08, h * 0.33, w * 0.26, color)
    _suit(draw, suit, w * 0.4, h * 0.48, w * 0.48, color)
    return _shrink(image, size)


@cache
def card_back(size: tuple[int, int]) -> Image.Image:
    image, draw = _blank(size, BACK, WHITE)
    k = SUPERSAMPLE
    w, h = image.size
    inset = 3 * k
    draw.rounded_rectangle(
        (inset, inset, w - inset, h - inset), radius=w // 12, outline=(150, 180, 230), width=k
    )
    for offset in range(-h, w, 5 * k):
        draw.line((offset, inset * 2, offset + h, h + inset * 2), fill=(60, 110, 190), width=k)
    draw.rounded_rectangle((0, 0, w - 1, h - 1), radius=w // 9, outline=WHITE, width=k)
    return _shrink(image, size)


@cache
def catch_chip(rank: str) -> Image.Image:
    """A laid catch: a small card with its rank."""
    image, draw = _blank(CHIP, WHITE, (90, 90, 90))
    w, h = image.size
    draw.text(
        (w / 2, h / 2),
        rank,
        fill=BLACK,
        font=font(int(h * (0.55 if len(rank) == 1 else 0.42))),
        anchor="mm",
    )
    return _shrink(image, CHIP)


@cache
def table_background() -> Image.Image:
    image = Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND)
    k = SUPERSAMPLE
    felt = Image.new("RGB", (WIDTH * k, HEIGHT * k), BACKGROUND)
    draw = ImageDraw.Draw(felt)
    cx, cy = CENTER
    box = ((cx - 430) * k, (cy - 235) * k, (cx + 430) * k, (cy + 235) * k)
    draw.ellipse(box, fill=FELT, outline=FELT_EDGE, width=14 * k)
    image.paste(felt.resize((WIDTH, HEIGHT), Image.Resampling.LANCZOS))
    return image


# ---------------------------------------------------------------------- layout


def seat_centers(players: int, bottom: int) -> dict[int, tuple[int, int]]:
    """Where each seat's panel goes: ``bottom`` at the bottom of the table, then going left
    (seat + 1) clockwise around it."""
    cx, cy = CENTER
    rx, ry = RADII
    centers = {}
    for k in range(players):
        angle = math.pi / 2 + 2 * math.pi * k / players
        centers[(bottom + k) % players] = (
            round(cx + rx * math.cos(angle)),
            round(cy + ry * math.sin(angle)),
        )
    return centers


def _step(count: int, card_width: int, width: int) -> float:
    """How far apart ``count`` overlapping cards lie to fit in ``width`` pixels."""
    step = card_width + 3.0
    return step if count < 2 else min(step, (width - card_width) / (count - 1))


@lru_cache(maxsize=1024)
def fan(cards: tuple[str, ...], size: tuple[int, int], width: int) -> Image.Image:
    """Card backs (``"back"``) or catches (ranks, ``size == CHIP``) side by side,
    overlapping to fit ``width`` pixels, as one sprite: the same few come back every frame."""
    sprites = [catch_chip(card) if size == CHIP else card_back(size) for card in cards]
    step = _step(len(sprites), size[0], width)
    image = Image.new("RGBA", (round(size[0] + step * (len(sprites) - 1)) + 1, size[1]))
    for index, sprite in enumerate(sprites):
        image.alpha_composite(sprite, (round(index * step), 0))
    return image


def _paste_fan(image: Image.Image, cards, size, xy: tuple[int, int], width: int) -> int:
    """Paste cards side by side from ``xy`` within ``width`` pixels; the width they take
    (0 for none). Face-up hands change every frame: their cards are pasted one by one."""
    if not cards:
        return 0
    if size == CHIP or cards[0] == "back":
        sprite = fan(tuple(cards), size, width)
        image.paste(sprite, xy, sprite)
        return sprite.width
    step = _step(len(cards), size[0], width)
    x, y = xy
    for index, card in enumerate(cards):
        sprite = card_face(card, size)
        image.paste(sprite, (round(x + index * step), y), sprite)
    return round(size[0] + step * (len(cards) - 1)) + 1


def _catches(image: Image.Image, seat: SeatScene, x: int, y: int, width: int) -> None:
    points = f"{seat.points} pts"
    if seat.catches:
        room = int(width - text_width(points, 13) - 8)
        shown = _paste_fan(image, seat.catches, CHIP, (x, y), min(room, 20 * len(seat.catches)))
    else:
        write(image, (x, y + 5), "no catches", 13, MUTED)
        shown = text_width("no catches", 13) + 4
    write(image, (x + shown + 6, y + 5), points, 13, MUTED)


VIEWER_BOX = (150, 486, 810, 632)  # the viewer's own place at the bottom


def _rim(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], marked: bool) -> None:
    """A seat's panel: gold-rimmed for the seat to move or a winner."""
    outline = PANEL_TURN if marked else (60, 120, 80)
    draw.rounded_rectangle(box, radius=10, fill=PANEL, outline=outline, width=3 if marked else 1)


@lru_cache(maxsize=256)
def table_with_panels(players: int, viewer: int | None, marked: tuple[bool, ...]) -> Image.Image:
    """The table with every seat's empty panel: a frame starts from a copy of it."""
    image = table_background().copy()
    draw = ImageDraw.Draw(image)
    for seat, (x, y) in seat_centers(players, 0 if viewer is None else viewer).items():
        if seat == viewer:
            _rim(draw, VIEWER_BOX, marked[seat])
        else:
            w, h = PANEL_SIZE
            _rim(draw, (x - w // 2, y - h // 2, x + w - w // 2, y + h - h // 2), marked[seat])
    return image


def shortened(text: str, size: int, width: float) -> str:
    """``text`` cut to fit ``width`` pixels, with "..." where it was cut."""
    if line_width(text, size) <= width:
        return text
    while text and line_width(text + "...", size) > width:
        text = text[:-1]
    return text.rstrip() + "..."


def _panel(image: Image.Image, seat: SeatScene, center: tuple[int, int]) -> None:
    """Another seat: its label, its hand (backs and a count, or face up in the table view),
    its catches and points."""
    w, h = PANEL_SIZE
    x, y = center[0] - w // 2, center[1] - h // 2
    room = w - 20  # the label stops short of the tag at the right
    if seat.winner or seat.to_move:
        tag = "WINNER" if seat.winner else "to ask"
        write(image, (x + w - 10, y + 7), tag, 13, PANEL_TURN, "right")
        room -= line_width(tag, 13) + 8
    label = shortened(seat.label + ("  (out)" if seat.out else ""), 15, room)
    write(image, (x + 10, y + 6), label, 15, PANEL_TURN if seat.to_move else WHITE)
    if seat.cards is None:
        backs = ("back",) * min(seat.hand_size, 12)
        shown = _paste_fan(image, backs, SMALL, (x + 10, y + 28), 120)
        count = f"{seat.hand_size} card{'s' if seat.hand_size != 1 else ''}"
        write(image, (x + 18 + shown, y + 44), count, 16, WHITE)
    elif seat.cards:
        _paste_fan(image, seat.cards, SMALL, (x + 10, y + 28), w - 20)
    else:
        write(image, (x + 10, y + 44), "no cards", 15, MUTED)
    _catches(image, seat, x + 10, y + 84, w - 20)


def _viewer(image: Image.Image, seat: SeatScene) -> None:
    """The viewer's own place: a wide strip at the bottom with its cards face up."""
    x, y, right, _ = VIEWER_BOX
    w = right - x
    tag = "WINNER" if seat.winner else ("your turn" if seat.to_move else f"{seat.hand_size} cards")
    color = PANEL_TURN if seat.to_move or seat.winner else MUTED
    write(image, (x + w - 12, y + 8), tag, 14, color, "right")
    room = w - 24 - line_width(tag, 14) - 8
    label = shortened(seat.label + ("  (out)" if seat.out else ""), 16, room)
    write(image, (x + 12, y + 7), label, 16, PANEL_TURN if seat.to_move else WHITE)
    if seat.cards:
        _paste_fan(image, seat.cards, BIG, (x + 12, y + 30), w - 24)
    else:
        write(image, (x + 12, y + 56), "no cards", 16, MUTED)
    _catches(image, seat, x + 12, y + 114, w - 24)


def _wrap(text: str, width: int, size: int) -> list[str]:
    words, lines, line = text.split(), [], ""
    for word in words:
        trial = f"{line} {word}".strip()
        if line and text_width(trial, size) > width:
            lines.append(line)
            line = word
        else:
            line = trial
    return [*lines, line] if line else lines


def _center(image: Image.Image, scene: Scene) -> None:
    cx, cy = CENTER
    # The pool: a short stack of backs and its count.
    back = card_back(SMALL)
    for index in range(min(scene.pool_size, 5)):
        image.paste(back, (cx - 70 + index * 3, cy - 92 - index * 2), back)
    pool = f"Pool: {scene.pool_size} card{'s' if scene.pool_size != 1 else ''}"
    write(image, (cx - 18, cy - 74), pool, 17, WHITE)
    y = cy - 26
    ask = scene.last_ask
    if ask is not None:
        for line in _wrap(ask.text, 380, 16):
            write(image, (cx, y), line, 16, WHITE, "center")
            y += 20
        color = HIT if ask.handed else MISS
        answer = " ".join(ask.answer)
        lines = _wrap(answer, 380, 14)
        if len(lines) > 4:
            lines = [*lines[:3], "..."]
        for line in lines:
            write(image, (cx, y), line, 14, color, "center")
            y += 17
    if scene.status:
        write(image, (cx, y + 8), scene.status, 16, PANEL_TURN, "center")


def draw(scene: Scene) -> np.ndarray:
    """The scene as a ``(HEIGHT, WIDTH, 3)`` uint8 RGB array."""
    players = len(scene.seats)
    marked = tuple(seat.to_move or seat.winner for seat in scene.seats)
    image = table_with_panels(players, scene.viewer, marked).copy()
    write(image, (12, 8), scene.title, 14, MUTED)
    centers = seat_centers(players, 0 if scene.viewer is None else scene.viewer)
    for seat in scene.seats:
        if seat.seat == scene.viewer:
            _viewer(image, seat)
        else:
            _panel(image, seat, centers[seat.seat])
    _center(image, scene)
    # tobytes with the raw mode named is several times faster than np.asarray(image).
    pixels = np.frombuffer(image.tobytes("raw", "RGB"), np.uint8).reshape(HEIGHT, WIDTH, 3)
    return pixels.copy()
