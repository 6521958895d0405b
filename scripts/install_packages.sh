# Sourced by the scripts in this folder: install_missing PACKAGE... installs, as root (or through sudo), the Debian
# packages that are not installed yet, and says which.
install_missing() {
  local missing=() package
  for package in "$@"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  ((${#missing[@]})) || return 0
  echo "[minigen] installing missing Debian packages: ${missing[*]}" >&2
  local as_root=()
  [[ $(id -u) -eq 0 ]] || as_root=(sudo)
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
}
