#!/usr/bin/env bash
# Installs shoal into a scratch prefix and builds the embedding example
# against it twice: with find_package (shoal) and with pkg-config. This is
# what an embedder does; it proves the header, library, shoal.pc and the
# CMake package are installed and usable.
set -eu
shoal=$1 source=$2 build=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

if grep -q '^SHOAL_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" || grep -q '^SHOAL_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
    echo "skip: an instrumented build is not for installing (the plain build tests the install)"
    exit 77
fi

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in bin/shoal include/shoal.h lib/libshoal.so lib/pkgconfig/shoal.pc \
         lib/cmake/shoal/shoalConfig.cmake lib/cmake/shoal/shoalTargets.cmake; do
    # GNUInstallDirs may pick lib64 or a multiarch dir; accept any lib*.
    found=$(cd "$prefix" && ls -d ${f/#lib\//lib*\/} 2>/dev/null | head -1)
    [ -n "$found" ] || { echo "FAIL: install is missing $f"; exit 1; }
done
"$prefix/bin/shoal" --version | grep -q '^shoal ' || { echo "FAIL: installed shoal runs"; exit 1; }
libdir=$(dirname "$(ls -d "$prefix"/lib*/libshoal.so | head -1)")

# With CMake's find_package.
cmake -S "$source/examples/embed-c" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake.log"
cmake --build "$work/cmake" >>"$work/cmake.log"
LD_LIBRARY_PATH=$libdir "$work/cmake/embed" | grep -q '^libshoal 0\.' \
    || { echo "FAIL: the find_package build runs"; cat "$work/cmake.log"; exit 1; }

# With pkg-config.
export PKG_CONFIG_PATH=$libdir/pkgconfig
cc "$source/examples/embed-c/main.c" $(pkg-config --cflags --libs shoal) -o "$work/embed-pc"
LD_LIBRARY_PATH=$libdir "$work/embed-pc" | grep -q '^key [A-Za-z0-9+/]\{43\}=$' \
    || { echo "FAIL: the pkg-config build runs"; exit 1; }

# The example service that uses the whole node API, with pkg-config.
cc "$source/examples/counter/main.c" $(pkg-config --cflags --libs shoal) -pthread -o "$work/counter" \
    || { echo "FAIL: the counter example builds against the installed library"; exit 1; }

# Only the public API is exported from the shared library: the functions
# include/shoal.h declares, and no other shoal_ symbol.
public=$(grep -o 'shoal_[a-z0-9_]* (' "$source/include/shoal.h" | tr -d ' (' | sort -u)
exported=$(nm -D --defined-only "$libdir/libshoal.so" | awk '{print $3}' | grep '^shoal' | sort -u)
internal=$(comm -13 <(echo "$public") <(echo "$exported"))
[ -z "$internal" ] || { echo "FAIL: libshoal.so exports internal symbols: $internal"; exit 1; }
missing=$(comm -23 <(echo "$public") <(echo "$exported"))
[ -z "$missing" ] || { echo "FAIL: libshoal.so does not export: $missing"; exit 1; }

echo "install: find_package and pkg-config builds work, and only shoal.h is exported"
