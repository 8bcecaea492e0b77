"""Headless Chromium driven by Selenium, for the browser tests and the docs' screenshots.

It uses the system's browser and driver (Debian's ``chromium`` and ``chromium-driver``:
``/usr/bin/chromium``, ``/usr/bin/chromedriver``; ``scripts/install_browser.sh`` installs
them), named explicitly so that Selenium Manager never tries to download one, and a fresh
empty profile. The flags keep Chromium from reaching out to the network on its own.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def missing() -> list[str]:
    """The browser parts that are not installed."""
    return [path for path in (CHROMIUM, CHROMEDRIVER) if not Path(path).exists()]


@contextmanager
def chromium(width: int = 1400, height: int = 900) -> Iterator:
    """A headless Chromium WebDriver with a new empty profile, closed afterwards."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="gofish-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={width},{height}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
