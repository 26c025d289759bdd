#!/usr/bin/env bash
# Set up everything the tests need on a fresh machine, then run every test (lint, unit and property
# tests, AppTest page tests, browser tests in headless Chromium). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt

# Debian's Chromium for the browser tests (Playwright's own browser download does not work here),
# and nginx for the reverse-proxy tests (scripts/proxy.py runs its own; the package's service is
# not needed).
PKGS=""
if [ -z "${CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then PKGS="chromium"; fi
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then PKGS="$PKGS nginx"; fi
if [ -n "$PKGS" ]; then
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $PKGS >/dev/null
fi

.venv/bin/ruff check .
# Two worker processes (pytest-xdist). --browser-lane (tests/conftest.py): the Chromium tests run in
# one worker, one after another, while the other takes the remaining files; two Chromium tests at
# once on 2 cores each ran 2-4 times slower. PYTEST_WORKERS=0 runs it all in one process; arguments
# after these (say -n 0) take precedence.
.venv/bin/python -m pytest -n "${PYTEST_WORKERS:-2}" --dist loadfile --browser-lane "$@"
