#!/usr/bin/env bash
# The Debian packages as a user gets them (docs/packages.md), from a Release build directory:
#   1. `cpack -G DEB` writes livemon, livemon-dev and python3-livemon;
#   2. their content is sane: all under /usr, nothing in /usr/local, no path of the build or source
#      tree inside any file, no tests, benchmarks or examples;
#   3. lintian reports no errors (its warnings are printed); desktop-file-validate passes;
#   4. they are installed: with CI=true as root (a throwaway machine) for real, with
#      `apt-get install ./livemon_*.deb ...`; anywhere else into a scratch root (dpkg -x), after
#      `apt-get --simulate` shows their dependencies resolve: a developer's machine never gets
#      packages it did not ask for (LIVEMON_INSTALL_PACKAGES=1 installs them for real anyway);
#   5. what is installed works: livemon --version and livemonctl --version, their man pages, the
#      desktop entry's Exec line starts the dashboard (offscreen), python3 imports livemon, and the
#      consumer project (tests/install/consumer) builds with find_package against the packages;
#   6. after a real install, `apt-get purge` leaves no file or folder of the packages behind.
# Called by test.sh after its Release build; on its own: scripts/test-packages.sh [BUILD_DIR]
# (default build). Prints one line per check and ends with "Debian packages: N checks passed".
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=$(cd "${1:-build}" && pwd)
work="$build/packages-test"
packages=(livemon livemon-dev python3-livemon)

checks=0
pass() {
  checks=$((checks + 1))
  echo "ok: $*"
}
fail() {
  echo "FAILED: $*" >&2
  exit 1
}

for tool in cpack dpkg-deb dpkg-shlibdeps lintian desktop-file-validate; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is missing (scripts/install-deps.sh --test installs it)"
done

echo "-- cpack -G DEB in $build"
rm -f "$build"/*.deb
rm -rf "$work"
mkdir -p "$work"
(cd "$build" && cpack -G DEB >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log" >&2; fail "cpack -G DEB"; }
debs=()
for package in "${packages[@]}"; do
  deb=$(ls "$build/${package}"_*.deb 2>/dev/null || true)
  [ -f "$deb" ] || fail "cpack wrote no ${package}_*.deb (see $work/cpack.log)"
  debs+=("$deb")
done
pass "cpack -G DEB wrote $(cd "$build" && ls ./*.deb | sed 's,^\./,,' | tr '\n' ' ')"

echo "-- content"
# Every install rule names the component of its package: one without (CMake's "Unspecified") or
# of another name would reach no package. python-torch-ops is left out on purpose
# (cmake/LivemonPackaging.cmake).
components=$(grep -rhoE 'CMAKE_INSTALL_COMPONENT STREQUAL "[^"]*"' --include=cmake_install.cmake "$build" |
  sed 's/.*"\(.*\)"/\1/' | sort -u)
stray=$(echo "$components" | grep -vxE 'livemon|dev|python|python-torch-ops' || true)
[ -z "$stray" ] || fail "install rules of components no package holds: $stray"
pass "every install rule belongs to a package's component ($(echo $components))"
for deb in "${debs[@]}"; do
  name=$(dpkg-deb -f "$deb" Package)
  dpkg-deb -c "$deb" | awk '{print $6}' >"$work/$name.paths"
  outside=$(grep -Ev '^\./$|^\./usr/' "$work/$name.paths" || true)
  [ -z "$outside" ] || fail "$name installs outside /usr: $outside"
  local_paths=$(grep -E '^\./usr/local/' "$work/$name.paths" || true)
  [ -z "$local_paths" ] || fail "$name installs into /usr/local: $local_paths"
  unwanted=$(grep -Ei '/(tests?|bench|benchmarks?|examples?|fuzz)/|_(test|bench|fuzz)$|gtest|gmock' "$work/$name.paths" || true)
  [ -z "$unwanted" ] || fail "$name holds tests, benchmarks or examples: $unwanted"
  mkdir -p "$work/content/$name"
  dpkg-deb -x "$deb" "$work/content/$name"
  leaked=$(grep -rlF -e "$root" -e "$build" "$work/content/$name" || true)
  [ -z "$leaked" ] || fail "$name has files naming the build or source tree: $leaked"
  pass "$name: $(grep -cv '/$' "$work/$name.paths") files, all under /usr, no test or build path"
done
grep -qx './usr/bin/livemon' "$work/livemon.paths" && grep -qx './usr/bin/livemonctl' "$work/livemon.paths" ||
  fail "livemon does not hold /usr/bin/livemon and /usr/bin/livemonctl"
grep -qx './usr/share/applications/livemon.desktop' "$work/livemon.paths" ||
  fail "livemon does not hold /usr/share/applications/livemon.desktop"
grep -q '^\./usr/share/icons/hicolor/.*/apps/livemon\.png$' "$work/livemon.paths" ||
  fail "livemon does not hold the icon in the hicolor theme"
pass "livemon holds both programs, the desktop entry and its icon"

echo "-- lintian"
# Errors fail; warnings and the rest are printed for the reader.
lintian --fail-on error --tag-display-limit 0 "${debs[@]}" >"$work/lintian.log" 2>&1 ||
  { cat "$work/lintian.log" >&2; fail "lintian reports errors"; }
grep -v '^running with root privileges' "$work/lintian.log" | sed 's/^/   /' || true
pass "lintian: no errors, $(grep -c '^W: ' "$work/lintian.log" || true) warning(s)"

desktop-file-validate "$root/resources/livemon.desktop" || fail "desktop-file-validate resources/livemon.desktop"
pass "desktop-file-validate resources/livemon.desktop"

real_install=0
if { [ "${CI:-}" = "true" ] && [ "$(id -u)" -eq 0 ]; } || [ "${LIVEMON_INSTALL_PACKAGES:-0}" = "1" ]; then
  real_install=1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  sudo=(sudo)
fi

if [ "$real_install" = 1 ]; then
  echo "-- apt-get install ${debs[*]##*/}"
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y "${debs[@]}" >"$work/apt-install.log" 2>&1 ||
    { cat "$work/apt-install.log" >&2; fail "apt-get install of the packages"; }
  pass "apt-get install of the packages"
  prefix=/usr
  bin=/usr/bin
  python_path=""
else
  echo "-- not a CI machine: the packages go into a scratch root, not onto this system"
  echo "   (CI=true as root, or LIVEMON_INSTALL_PACKAGES=1, installs them for real and checks their removal)"
  apt-get install --simulate "${debs[@]}" >"$work/apt-simulate.log" 2>&1 ||
    { cat "$work/apt-simulate.log" >&2; fail "apt-get --simulate: the packages' dependencies do not resolve"; }
  pass "apt-get --simulate install: their dependencies resolve on this machine"
  scratch="$work/root"
  mkdir -p "$scratch"
  for deb in "${debs[@]}"; do
    dpkg-deb -x "$deb" "$scratch"
  done
  prefix="$scratch/usr"
  bin="$scratch/usr/bin"
  python_path=$(ls -d "$scratch"/usr/lib/python3*/dist-packages)
  export PYTHONDONTWRITEBYTECODE=1
fi

echo "-- what is installed works"
for program in livemon livemonctl; do
  version=$("$bin/$program" --version) || fail "$bin/$program --version"
  case "$version" in
    *"$(dpkg-deb -f "${debs[0]}" Version)"*) pass "$bin/$program --version: $version" ;;
    *) fail "$bin/$program --version printed \"$version\", not the package's version" ;;
  esac
done

# The man pages exist and name every command livemonctl has.
for program in livemon livemonctl; do
  [ -f "$prefix/share/man/man1/$program.1.gz" ] || fail "no man page $prefix/share/man/man1/$program.1.gz"
done
commands=$("$bin/livemonctl" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && NF {print $1}')
[ -n "$commands" ] || fail "livemonctl --help lists no commands"
for command in $commands; do
  zcat "$prefix/share/man/man1/livemonctl.1.gz" | grep -qx ".B $command" ||
    fail "the man page livemonctl(1) does not describe the command $command"
done
pass "man pages livemon(1) and livemonctl(1); livemonctl(1) describes all $(echo "$commands" | wc -l) commands"

# The menu runs the Exec line of the installed entry: its program must exist where the menu looks
# (PATH) and start the dashboard. It starts offscreen, with its settings and home in a scratch
# folder and an endpoint nobody publishes on, and must still be running after 3 s.
desktop="$prefix/share/applications/livemon.desktop"
desktop-file-validate "$desktop" || fail "desktop-file-validate $desktop"
exec_line=$(sed -n 's/^Exec=//p' "$desktop")
exec_program=${exec_line%% *}
if [ "$real_install" = 1 ]; then
  resolved=$(command -v "$exec_program") || fail "the desktop entry's Exec program $exec_program is not on PATH"
else
  resolved="$bin/$exec_program"
fi
[ "$resolved" = "$bin/livemon" ] || fail "the desktop entry's Exec ($exec_line) runs $resolved, not $bin/livemon"
mkdir -p "$work/home"
status=0
HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_CACHE_HOME="$work/home/.cache" \
  QT_QPA_PLATFORM=offscreen timeout 3 "$resolved" --settings "$work/home/livemon.ini" --no-history \
  "ipc://$work/nobody" >"$work/dashboard.log" 2>&1 || status=$?
[ "$status" -eq 124 ] || { cat "$work/dashboard.log" >&2; fail "the dashboard exited ($status) instead of running"; }
pass "the desktop entry validates and its Exec ($exec_line) starts the dashboard"

# Installed for real, importing as root may write bytecode beside the modules: the purge below
# must remove it too.
(cd "$work" && PYTHONPATH="$python_path" /usr/bin/python3 -c '
import datetime, livemon
seen = []
livemon.register_event_handler(seen.append)
s = livemon.Stat("loss", [livemon.MEAN], datetime.timedelta(hours=1)); s.add(2.0); s.flush()
assert seen[0].data == {"loss.mean": 2.0}, seen[0].data
print(livemon.__version__, livemon.__file__)') >"$work/python.log" 2>&1 ||
  { cat "$work/python.log" >&2; fail "/usr/bin/python3 cannot use the installed livemon module"; }
pass "/usr/bin/python3 imports livemon $(cat "$work/python.log")"

consumer="$work/consumer"
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
prefix_path=()
if [ "$real_install" = 0 ]; then
  prefix_path=(-DCMAKE_PREFIX_PATH="$prefix")
fi
{ cmake -S tests/install/consumer -B "$consumer" -G Ninja "${launcher[@]}" "${prefix_path[@]}" &&
  cmake --build "$consumer" && "$consumer/livemon_publish_only" && "$consumer/livemon_consumer"; } \
  >"$work/consumer.log" 2>&1 || { cat "$work/consumer.log" >&2; fail "the consumer project against $prefix"; }
found=$(sed -n 's/^livemon_DIR:[A-Z]*=//p' "$consumer/CMakeCache.txt")
case "$found" in
  "$prefix"/*) pass "the consumer project configures, builds and runs with find_package(livemon) from $found" ;;
  *) fail "the consumer project found livemon in $found, not under $prefix" ;;
esac

if [ "$real_install" = 1 ]; then
  echo "-- apt-get purge"
  # Everything the packages installed, with Python's bytecode that importing livemon as root wrote.
  dpkg -L "${packages[@]}" | grep -v '^/\.$' | sort -u >"$work/installed.paths"
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get purge -y "${packages[@]}" >"$work/apt-purge.log" 2>&1 ||
    { cat "$work/apt-purge.log" >&2; fail "apt-get purge of the packages"; }
  left=""
  while IFS= read -r path; do
    if [ -e "$path" ] && { [ ! -d "$path" ] || ! dpkg -S "$path" >/dev/null 2>&1; }; then
      left+=" $path"
    fi
  done <"$work/installed.paths"
  [ -z "$left" ] || fail "apt-get purge left behind:$left"
  pass "apt-get purge removed all $(wc -l <"$work/installed.paths") files and folders of the packages"
fi

echo "Debian packages: $checks checks passed"
