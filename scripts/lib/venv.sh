# A cached Python venv in .build/<name> for tests that check the hub against another project's own code
# (scripts/ha-venv, scripts/webpush-venv). Sourced, not run: the caller sets -euo pipefail and cds to the repo.
#
# venv_open NAME TAG: when .build/NAME/.installed-TAG exists, prints the venv's folder and exits. Otherwise takes
# .build/NAME.lock (two tests may ask at once), makes the venv anew when it is missing or broken, and returns with
# $venv (its folder) and $pip (its pip, quiet) set; the caller installs, then calls venv_close.
# Needs PyPI; when the interpreter lacks venv support, installs Debian's python3-venv (root, or sudo without a
# password prompt). Environment: PYTHON (default python3, must be 3.11 or newer).

venv_apt_install() {
    local sudo
    if [ "$(id -u)" -eq 0 ]; then
        sudo=()
    elif command -v sudo >/dev/null 2>&1; then
        sudo=(sudo -n)
    else
        echo "$venv_name: needs $*; run as root: apt-get install $*" >&2
        exit 1
    fi
    echo "$venv_name: installing $*" >&2
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -q >&2
    "${sudo[@]}" apt-get install -y -q --no-install-recommends "$@" >&2
}

venv_open() {
    venv_name="$1"
    venv="$PWD/.build/$1"
    venv_marker="$venv/.installed-$2"
    local python="${PYTHON:-python3}"
    if [ -e "$venv_marker" ]; then
        echo "$venv"
        exit 0
    fi
    if ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
        echo "$venv_name: $python is not Python 3.11 or newer; set PYTHON" >&2
        exit 1
    fi
    mkdir -p .build
    exec 9>".build/$venv_name.lock"
    flock 9
    if [ -e "$venv_marker" ]; then # another run finished it while this one waited
        echo "$venv"
        exit 0
    fi
    venv_started=$(date +%s)
    # A venv left half-made (or by another interpreter) is made again from nothing.
    if [ -d "$venv" ] && ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
        rm -rf "$venv"
    fi
    if [ ! -x "$venv/bin/python" ]; then
        rm -rf "$venv"
        if ! "$python" -m venv "$venv" >&2; then
            rm -rf "$venv"
            venv_apt_install python3-venv
            "$python" -m venv "$venv" >&2
        fi
    fi
    rm -f "$venv"/.installed-*
    pip=("$venv/bin/python" -m pip --disable-pip-version-check --no-input -q)
}

venv_close() {
    touch "$venv_marker"
    echo "$venv_name: made in $(( $(date +%s) - venv_started ))s, $(du -sh "$venv" | cut -f1)" >&2
    echo "$venv"
}
