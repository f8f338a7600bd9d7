#!/usr/bin/env bash
# sdk_out_of_tree_test.sh — proves a vendor can build, test and ship a plugin against an INSTALLED
# hwinfer, with nothing from the source or build tree on any path:
#   1. `cmake --install` the build tree into a fresh prefix and check the SDK files are there;
#   2. copy sdk/template/ elsewhere (as a vendor would) and configure + build it with only
#      CMAKE_PREFIX_PATH=<prefix> (warnings are errors);
#   3. run the installed `hwinfer plugin check` and `hwinfer conformance --plugin` on the result,
#      and the template's own ctest (hwinfer_add_conformance_test);
#   4. install the plugin (and its expectations) into the prefix and see the installed hwinfer
#      discover it by itself (`hwinfer devices`, `hwinfer conformance --backend template`).
# Fails (non-zero) on the first error, saying which step. Leaves everything under --work-dir for
# inspection. Must not touch anything outside --work-dir.
#
# Usage: sdk_out_of_tree_test.sh --source-dir DIR --build-dir DIR --work-dir DIR
#          [--generator G] [--cxx-compiler PATH] [--build-type T] [--sanitize LIST]
set -euo pipefail

source_dir="" build_dir="" work_dir="" generator="" cxx_compiler="" build_type="" sanitize=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --source-dir) source_dir="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --work-dir) work_dir="$2"; shift 2 ;;
    --generator) generator="$2"; shift 2 ;;
    --cxx-compiler) cxx_compiler="$2"; shift 2 ;;
    --build-type) build_type="$2"; shift 2 ;;
    --sanitize) sanitize="$2"; shift 2 ;;
    *) echo "sdk_out_of_tree_test: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for required in source_dir build_dir work_dir; do
  if [[ -z "${!required}" ]]; then
    echo "sdk_out_of_tree_test: --${required//_/-} is required" >&2
    exit 2
  fi
done

step() { echo; echo "=== sdk_out_of_tree: $*"; }
fail() { echo "sdk_out_of_tree: FAILED: $*" >&2; exit 1; }

prefix="$work_dir/prefix"
vendor_src="$work_dir/vendor-template"
vendor_build="$work_dir/vendor-template-build"
# The installed tree must stand on its own: no plugin path or library path from the caller.
unset HWINFER_PLUGIN_PATH LD_LIBRARY_PATH
cmake_command="${CMAKE_COMMAND:-cmake}"
ctest_command="${CTEST_COMMAND:-ctest}"

step "fresh work folder $work_dir"
rm -rf "$work_dir"
mkdir -p "$work_dir"

step "install the build tree into $prefix"
"$cmake_command" --install "$build_dir" --prefix "$prefix" > "$work_dir/install.log" ||
  { cat "$work_dir/install.log" >&2; fail "cmake --install $build_dir"; }

step "check the installed tree"
shopt -s nullglob
libs=("$prefix"/lib/libhwinfer.so*)
shopt -u nullglob
[[ ${#libs[@]} -gt 0 ]] || fail "no lib/libhwinfer.so* in $prefix"
for file in bin/hwinfer include/hwinfer/plugin.h include/hwinfer/plugin_support.h \
            include/hwinfer/kernel_kinds.def \
            lib/cmake/hwinfer/hwinferConfig.cmake lib/cmake/hwinfer/hwinferConfigVersion.cmake \
            lib/cmake/hwinfer/hwinferTargets.cmake lib/cmake/hwinfer/hwinferPlugin.cmake \
            lib/hwinfer/plugins/hwinfer-cpu.so; do
  [[ -e "$prefix/$file" ]] || fail "$file is not installed"
  echo "ok   $file"
done
if compgen -G "$prefix/lib/hwinfer/plugins/hwinfer-abi-*" > /dev/null; then
  fail "test plugins (hwinfer-abi-*) were installed into lib/hwinfer/plugins"
fi
resolved=$(ldd "$prefix/bin/hwinfer" | awk '/libhwinfer\.so/ {print $3}')
[[ "$resolved" == "$prefix/"* ]] ||
  fail "the installed hwinfer resolves libhwinfer to '$resolved', not into $prefix"

step "copy sdk/template out of the source tree (as a vendor would)"
cp -R "$source_dir/sdk/template" "$vendor_src"

step "configure the template against the installed package only"
configure=("$cmake_command" -S "$vendor_src" -B "$vendor_build"
           "-DCMAKE_PREFIX_PATH=$prefix"
           -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
           -DCMAKE_COMPILE_WARNING_AS_ERROR=ON)
[[ -n "$generator" ]] && configure+=(-G "$generator")
[[ -n "$cxx_compiler" ]] && configure+=("-DCMAKE_CXX_COMPILER=$cxx_compiler")
[[ -n "$build_type" ]] && configure+=("-DCMAKE_BUILD_TYPE=$build_type")
if [[ -n "$sanitize" ]]; then
  # Built the way the hwinfer that loads it was built, so both share one sanitizer runtime.
  configure+=("-DCMAKE_CXX_FLAGS=-fsanitize=$sanitize -fno-omit-frame-pointer -fno-sanitize-recover=all"
              "-DCMAKE_MODULE_LINKER_FLAGS=-fsanitize=$sanitize")
fi
"${configure[@]}" || fail "configuring the template against $prefix"
found_dir=$(sed -n 's/^hwinfer_DIR:PATH=//p' "$vendor_build/CMakeCache.txt")
[[ "$found_dir" == "$prefix/lib/cmake/hwinfer" ]] ||
  fail "find_package(hwinfer) used '$found_dir', not the installed '$prefix/lib/cmake/hwinfer'"

step "build the template"
"$cmake_command" --build "$vendor_build" || fail "building the template"
plugin="$vendor_build/hwinfer-template.so"
[[ -f "$plugin" ]] || fail "the build did not produce $plugin"
exported=$(nm -D --defined-only "$plugin" | awk '{print $3}' | grep -v '^_' || true)
[[ "$exported" == "hwinfer_plugin_query" ]] ||
  fail "$plugin must export exactly hwinfer_plugin_query, exports: $exported"

step "hwinfer plugin check (installed hwinfer)"
"$prefix/bin/hwinfer" plugin check "$plugin" || fail "hwinfer plugin check $plugin"

step "hwinfer conformance --plugin (installed hwinfer)"
"$prefix/bin/hwinfer" conformance --plugin "$plugin" \
  --expectations "$source_dir/sdk/template/conformance.yaml" | tee "$work_dir/conformance-plugin.log" ||
  fail "hwinfer conformance --plugin $plugin"
# The template computes (it is not a timing model): its cases must run, not be skipped.
passed=$(sed -n 's/^conformance: \([0-9]*\) passed, 0 failed.*/\1/p' "$work_dir/conformance-plugin.log")
[[ -n "$passed" && "$passed" -gt 0 ]] ||
  fail "hwinfer conformance --plugin $plugin ran no case (see $work_dir/conformance-plugin.log)"

step "the template's own ctest (hwinfer_add_conformance_test)"
"$ctest_command" --test-dir "$vendor_build" --output-on-failure ||
  fail "ctest in the template build"

step "install the template into the prefix; the installed hwinfer must find it by itself"
"$cmake_command" --install "$vendor_build" --prefix "$prefix" > "$work_dir/install-template.log" ||
  { cat "$work_dir/install-template.log" >&2; fail "cmake --install $vendor_build"; }
[[ -f "$prefix/lib/hwinfer/plugins/hwinfer-template.so" ]] ||
  fail "the template was not installed into lib/hwinfer/plugins"
"$prefix/bin/hwinfer" devices --json --no-probe > "$work_dir/devices.json" ||
  fail "hwinfer devices with the template installed"
grep -q '"Template device"' "$work_dir/devices.json" ||
  fail "hwinfer devices does not list the installed template plugin's device"

step "the installed conformance suite finds the template by name, with its installed expectations"
"$prefix/bin/hwinfer" conformance --backend template > "$work_dir/conformance-backend.log" ||
  { cat "$work_dir/conformance-backend.log" >&2; fail "hwinfer conformance --backend template"; }
grep -q "expectations $prefix/share/hwinfer/conformance/template.yaml" \
  "$work_dir/conformance-backend.log" ||
  fail "hwinfer conformance --backend template did not use the installed template.yaml"
tail -n 1 "$work_dir/conformance-backend.log"
grep -qE '^conformance: [1-9][0-9]* passed, 0 failed' "$work_dir/conformance-backend.log" ||
  fail "hwinfer conformance --backend template ran no case"

step "PASSED"
