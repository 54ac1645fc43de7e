#!/usr/bin/env bash
# The packaging step of .ci/run (issue 14): what a person installing Goalkeeper gets.
#   1. wheel + sdist with the standard front end (python -m build, isolated);
#   2. the wheel into a clean venv (timed), then packaging/smoke.py on its `goalkeeper`
#      (--version, headless demo, daemon SIGTERM, desktop install + validators, service install
#      + systemd-analyze verify, the window under Xvfb with a screenshot);
#   3. the wheel with pipx (from a throw-away tools venv), smoke without the window;
#   4. the PyInstaller one-folder bundle (packaging/bundle.py, built in the venv of 2), smoke.
# Prints the figures: wheel/sdist size, install time, bundle size (folder and .tar.gz), time.
# Needs .venv (the project with its test extra); pip downloads are cached in ~/.cache/pip.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
export PIP_CACHE_DIR="${PIP_CACHE_DIR:-$HOME/.cache/pip}"   # outside CI's throw-away XDG_CACHE_HOME
export PIP_DISABLE_PIP_VERSION_CHECK=1
OUT=dist/ci
rm -rf "$OUT" && mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mib() { python3 -c "import sys; print(f'{int(sys.argv[1]) / 2**20:.1f} MiB')" "$1"; }

.venv/bin/python -m build --outdir "$OUT" . >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
wheel=$(ls "$OUT"/goalkeeper-*.whl) sdist=$(ls "$OUT"/goalkeeper-*.tar.gz)
echo "[packaging] built $(basename "$wheel") ($(mib "$(stat -c %s "$wheel")")) and $(basename "$sdist") ($(mib "$(stat -c %s "$sdist")")) after $((SECONDS - t0)) s"

python3 -m venv "$WORK/venv"
t=$SECONDS
"$WORK/venv/bin/pip" install -q "$wheel"
echo "[packaging] wheel installed into a clean venv in $((SECONDS - t)) s ($(du -sm "$WORK/venv" | cut -f1) MiB venv)"
"$WORK/venv/bin/python" packaging/smoke.py --cmd "$WORK/venv/bin/goalkeeper" --screenshot "$OUT/window-wheel.png"
echo "[packaging] wheel smoke passed after $((SECONDS - t0)) s"

python3 -m venv "$WORK/tools"
"$WORK/tools/bin/pip" install -q pipx
t=$SECONDS
PIPX_HOME="$WORK/pipx" PIPX_BIN_DIR="$WORK/pipx-bin" PIPX_MAN_DIR="$WORK/pipx-man" \
  "$WORK/tools/bin/pipx" install --quiet "$wheel" >/dev/null
echo "[packaging] pipx install in $((SECONDS - t)) s"
"$WORK/venv/bin/python" packaging/smoke.py --cmd "$WORK/pipx-bin/goalkeeper"
echo "[packaging] pipx smoke passed after $((SECONDS - t0)) s"

t=$SECONDS
"$WORK/venv/bin/python" packaging/bundle.py --venv "$WORK/venv" --wheel "$wheel" --out "$OUT/bundle" \
  >"$WORK/bundle.log" 2>&1 || { cat "$WORK/bundle.log"; exit 1; }
grep '^\[bundle\] [^$]' "$WORK/bundle.log" || true
echo "[packaging] bundle built in $((SECONDS - t)) s"
"$WORK/venv/bin/python" packaging/smoke.py --cmd "$OUT/bundle/goalkeeper/goalkeeper" --screenshot "$OUT/window-bundle.png"
echo "[packaging] bundle smoke passed; packaging step took $((SECONDS - t0)) s"
