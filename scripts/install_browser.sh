#!/usr/bin/env bash
# Headless Chromium and its driver for the browser tests (tests/test_web_browser.py), from
# Debian's packages: /usr/bin/chromium and /usr/bin/chromedriver. Nothing is done when both
# are there; otherwise apt-get installs them (as root, or through sudo).
set -euo pipefail
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
    sudo="sudo"
fi
echo "Installing chromium and chromium-driver with apt-get (for the browser tests)..."
export DEBIAN_FRONTEND=noninteractive
apt_get=($sudo apt-get -qq -o DPkg::Lock::Timeout=600)
"${apt_get[@]}" update >/dev/null
"${apt_get[@]}" install -y --no-install-recommends chromium chromium-driver fonts-dejavu-core \
    >/dev/null
