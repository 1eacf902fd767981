#!/usr/bin/env bash
# Fetches the C API headers of ONNX Runtime into .deps/onnxruntime/ (git-ignored), for the
# OnnxRuntime backend (CMake finds them there). The onnxruntime wheel ships the library but no
# headers; Debian 13 (trixie) packages them (libonnxruntime-dev 1.21, MIT), and Debian 12 does
# not. So the package is downloaded, not installed, with a private apt configuration that lists
# trixie (bookworm's keyring verifies it) and unpacked into .deps: nothing changes on the system,
# and no root is needed. ONNX Runtime's C API is versioned, so 1.21's headers run any newer
# library (the wheel's 1.32). Does nothing when the headers are there.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.deps/onnxruntime
package=libonnxruntime-dev
[ -f "$out/include/onnxruntime_c_api.h" ] && exit 0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{lists/partial,archives/partial,preferences.d}
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
  > "$work/sources.list"
apt_options=(-o Dir::State::Lists="$work/lists" -o Dir::State::status=/dev/null
             -o Dir::Cache="$work" -o Dir::Cache::archives="$work/archives"
             -o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
             -o Dir::Etc::Preferences="$work/preferences" -o Dir::Etc::PreferencesParts="$work/preferences.d"
             -o APT::Sandbox::User="$(id -un)" -o Debug::NoLocking=1)
echo "aitune: downloading Debian 13's $package (ONNX Runtime's C API headers) into $out"
apt-get "${apt_options[@]}" -qq update
(cd "$work" && apt-get "${apt_options[@]}" -qq download "$package")
dpkg-deb -x "$work"/${package}_*.deb "$work/root"
rm -rf "$out"
mkdir -p "$out"
cp -r "$work/root/usr/include/onnxruntime" "$out/include"
cp "$work/root/usr/share/doc/$package/copyright" "$out/copyright"
dpkg-deb -f "$work"/${package}_*.deb Version > "$out/VERSION"
echo "aitune: ONNX Runtime headers $(cat "$out/VERSION") in $out/include"
