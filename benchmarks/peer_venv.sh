#!/usr/bin/env bash
# Make the peer-benchmark venv: CPython 3.12 with pyaeron (PyPI, cp312+ wheels only) and
# aeron_py built from this tree. pyaeron is never an aeron_py dependency; it lives only here.
#
#   benchmarks/peer_venv.sh                 # -> benchmarks/.build/peer-venv
#   PYTHON312=/path/to/python3.12 VENV=/tmp/v benchmarks/peer_venv.sh
#
# Re-run it after changing the bindings: it reinstalls aeron_py from the tree (Aeron's C
# objects come from ccache when it is installed). Needs a C/C++ compiler; the Aeron source
# is $AERON_SOURCE_DIR or what vendor/aeron/fetch.py prints (see CMakeLists.txt).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${VENV:-$repo/benchmarks/.build/peer-venv}
py=${PYTHON312:-}
is312() { "$1" -c 'import sys; assert sys.version_info[:2] == (3, 12)' >/dev/null 2>&1; }
if [ -z "$py" ]; then
  for candidate in "$(command -v python3.12 || true)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.*/bin/python; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && is312 "$candidate"; then py=$candidate; break; fi
  done
fi
if [ -z "$py" ] || ! "$py" -c 'import sys; assert sys.version_info[:2] >= (3, 12)' 2>/dev/null; then
  echo "peer_venv.sh: need CPython >= 3.12 for pyaeron's wheels; set PYTHON312=/path/to/python3.12" >&2
  exit 2
fi
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1
echo "peer venv: $venv from $py"
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
"$venv/bin/pip" install -q 'pyaeron==0.1.0' 'matplotlib>=3.8' scikit-build-core 'pybind11>=3,<4' 'cmake>=3.30' ninja
"$venv/bin/pip" install -q --no-build-isolation --no-deps --force-reinstall "$repo"
(cd / && "$venv/bin/python" - <<'PY'
import aeron_py, pyaeron
print("aeron_py", aeron_py.__version__, "links Aeron", aeron_py.aeron_version())
print("pyaeron", pyaeron.__version__, "links", pyaeron.aeron_version)
PY
)
