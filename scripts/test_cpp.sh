#!/usr/bin/env bash
# Builds the C++ deformer over the cxx bridge and the C ABI shared library, runs their test
# programs, and checks that the shared library exports nothing but the C ABI. The settings are
# generated from the Rust table (C struct, used by C++ too; the C++ conversions to the bridge by
# field name; the ctypes mirror; the Maya attribute table, compiled into test_deformer);
# test_c_abi compares the compiled C struct with the field list the Rust bridge exports, and
# scripts/check_settings_layout.py the ctypes mirror with both (names, order, offsets, sizes, types).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build_c_abi.sh
INC="-I target/cxxbridge -I plugin/cpp -I plugin/maya"
LIBS="-L target/release -lovertone_ffi -lpthread -ldl -lm"
g++ -std=c++17 -O2 -Wall -Wextra -Werror=missing-field-initializers plugin/cpp/overtone.cpp plugin/cpp/test_deformer.cpp $INC $LIBS \
  -o target/cpp/test_deformer
RUST_BACKTRACE=0 target/cpp/test_deformer
gcc -std=gnu11 -O2 -Wall -Werror=missing-field-initializers plugin/cpp/test_c_abi.c -I plugin/cpp -L target/cpp -lovertone_c -Wl,-rpath,"$PWD/target/cpp" -lm \
  -o target/cpp/test_c_abi
RUST_BACKTRACE=0 target/cpp/test_c_abi
OVERTONE_LIBRARY=target/cpp/libovertone_c.so python3 scripts/check_settings_layout.py
