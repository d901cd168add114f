#!/usr/bin/env bash
# sanitizer_runtime.sh LIBRARY: the sanitizer runtime a program that is not
# instrumented must preload before it loads LIBRARY, as a colon-separated
# LD_PRELOAD list; nothing if LIBRARY is a normal build. Under ASan,
# libstdc++ too: ASan's __cxa_throw interceptor finds no real function if
# libstdc++ is loaded after it (docs/security.md, "Foreign programs").
set -euo pipefail
needed=$(readelf -d "$1" | grep NEEDED || true)
runtime=()
case "$needed" in
  *libasan*) runtime=("$(gcc -print-file-name=libasan.so)" "$(gcc -print-file-name=libstdc++.so)") ;;
  *libtsan*) runtime=("$(gcc -print-file-name=libtsan.so)") ;;
esac
if [ ${#runtime[@]} -gt 0 ]; then readlink -f "${runtime[@]}" | paste -sd:; fi
