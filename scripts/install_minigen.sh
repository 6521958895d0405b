# shellcheck shell=bash
# Sourced by scripts/minigen.sh: install_minigen BUILD_DIR PREFIX runs `cmake --install` (as root, or through sudo)
# and says in one line what went where. CMake's install() rules decide the places: PREFIX/bin/minigen,
# PREFIX/share/minigen/{models,tokenizers,examples}, and the Python module in PREFIX/lib/python3.X/dist-packages,
# which Debian's /usr/bin/python3 has on its sys.path (for /usr/local and /usr alike).
install_minigen() {
  local build_dir="$1" prefix="$2" as_root=() module python_dir extra=""
  [[ $(id -u) -eq 0 ]] || as_root=(sudo)
  "${as_root[@]}" cmake --install "$build_dir" --prefix "$prefix" >/dev/null
  module=$(find "$build_dir/python" -maxdepth 1 -name 'minigen.cpython-*.so' -print -quit 2>/dev/null || true)
  if [[ -n "$module" ]]; then
    python_dir=$(find "$prefix/lib" -path '*/dist-packages/minigen.cpython-*.so' -print -quit 2>/dev/null || true)
    python_dir=$(dirname "${python_dir:-$prefix/lib/python3/dist-packages/x}")
    extra=", the Python module in $python_dir (Debian's /usr/bin/python3)"
    # A python3 earlier on the PATH than Debian's (pyenv) does not look in dist-packages. When it is the same Python
    # version (the module's file name carries the ABI, e.g. cpython-311-x86_64-linux-gnu), link the module into its
    # site-packages; another version could not load the module, so it is only named.
    local path_python suffix site
    path_python=$(command -v python3 || true)
    if [[ -n "$path_python" && "$(readlink -f "$path_python")" != "$(readlink -f /usr/bin/python3)" ]]; then
      suffix=$("$path_python" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null || true)
      site=$("$path_python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])' 2>/dev/null || true)
      if [[ -n "$suffix" && -n "$site" && "$(basename "$module")" == "minigen$suffix" ]]; then
        "${as_root[@]}" ln -sf "$python_dir/minigen$suffix" "$site/minigen$suffix"
        extra+=" and a link to it in $site (the python3 on the PATH, $path_python)"
      else
        extra+="; the python3 on the PATH ($path_python) is another Python version: use /usr/bin/python3"
      fi
    fi
  fi
  echo "[minigen] installed $prefix/bin/minigen, the shipped models and tokenizers in $prefix/share/minigen$extra"
}
