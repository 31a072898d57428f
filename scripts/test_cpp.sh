#!/usr/bin/env bash
# Builds the C++ deformer over the cxx bridge and the C ABI shared library, runs their test
# programs, and checks that the shared library exports nothing but the C ABI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build_c_abi.sh
INC="-I target/cxxbridge -I plugin/cpp"
LIBS="-L target/release -lovertone_ffi -lpthread -ldl -lm"
g++ -std=c++17 -O2 -Wall -Wextra plugin/cpp/overtone.cpp plugin/cpp/test_deformer.cpp $INC $LIBS \
  -o target/cpp/test_deformer
RUST_BACKTRACE=0 target/cpp/test_deformer
gcc -O2 plugin/cpp/test_c_abi.c -I plugin/cpp -L target/cpp -lovertone_c -Wl,-rpath,"$PWD/target/cpp" -lm \
  -o target/cpp/test_c_abi
RUST_BACKTRACE=0 target/cpp/test_c_abi
