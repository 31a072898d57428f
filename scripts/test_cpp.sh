#!/usr/bin/env bash
# Builds the C++ deformer over the cxx bridge and the C ABI shared library, runs their test
# programs, and checks that the shared library exports nothing but the C ABI.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p overtone-ffi
mkdir -p target/cpp
INC="-I target/cxxbridge -I plugin/cpp"
LIBS="-L target/release -lovertone_ffi -lpthread -ldl -lm"
g++ -std=c++17 -O2 -Wall -Wextra plugin/cpp/overtone.cpp plugin/cpp/test_deformer.cpp $INC $LIBS \
  -o target/cpp/test_deformer
RUST_BACKTRACE=0 target/cpp/test_deformer
g++ -std=c++17 -O2 -fPIC -shared -fvisibility=hidden plugin/cpp/overtone_c.cpp plugin/cpp/overtone.cpp \
  $INC $LIBS -Wl,--exclude-libs,ALL -Wl,-z,defs -o target/cpp/libovertone_c.so
exported=$(nm -D --defined-only target/cpp/libovertone_c.so | awk '{print $3}' | grep -v '^overtone_' || true)
if [ -n "$exported" ]; then
  echo "libovertone_c.so exports symbols besides the C ABI:"; echo "$exported"; exit 1
fi
gcc -O2 plugin/cpp/test_c_abi.c -I plugin/cpp -L target/cpp -lovertone_c -Wl,-rpath,"$PWD/target/cpp" -lm \
  -o target/cpp/test_c_abi
target/cpp/test_c_abi
