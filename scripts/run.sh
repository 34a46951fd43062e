#!/usr/bin/env bash
# Installs, builds and runs the main job on the built-in synthetic data.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
./build/xwires search "$@"
