#!/usr/bin/env bash
# Builds libovertone_c.so (the C ABI over the cxx bridge, for Python hosts) into target/cpp/ and
# checks that it exports nothing but its overtone_* functions.
set -euo pipefail
cd "$(dirname "$0")/.."
# The whole workspace, as the test suite builds it: one set of features, so the static library
# shares every compiled dependency with the tests and the demo (no second build of faer).
cargo build --release -q --workspace
mkdir -p target/cpp
INC="-I target/cxxbridge -I plugin/cpp"
LIBS="-L target/release -lovertone_ffi -lpthread -ldl -lm"
# The version script keeps every symbol but the C ABI local (template instantiations of the
# standard library would otherwise be exported with default visibility).
printf '{ global: overtone_*; local: *; };\n' > target/cpp/overtone_c.map
g++ -std=c++17 -O2 -Werror=missing-field-initializers -fPIC -shared -fvisibility=hidden plugin/cpp/overtone_c.cpp plugin/cpp/overtone.cpp \
  $INC $LIBS -Wl,--exclude-libs,ALL -Wl,-z,defs -Wl,--version-script=target/cpp/overtone_c.map \
  -o target/cpp/libovertone_c.so
exported=$(nm -D --defined-only target/cpp/libovertone_c.so | awk '{print $3}' | grep -v '^overtone_' || true)
if [ -n "$exported" ]; then
  echo "libovertone_c.so exports symbols besides the C ABI:"; echo "$exported"; exit 1
fi
