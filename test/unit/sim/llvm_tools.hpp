// Test support for test/unit/sim: runs the LLVM 14 tools whose paths CMake
// found (compile definitions TESSERA_CLANG, TESSERA_LLD, TESSERA_LLVM_MC,
// TESSERA_LLVM_OBJCOPY; see tools/tensix-run/CMakeLists.txt) to build RV32
// test programs while the tests run. The tools are required dependencies:
// a missing one fails the test with a message saying which.
#pragma once
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

namespace sim_test {

inline const char* const kClang = TESSERA_CLANG;
inline const char* const kLld = TESSERA_LLD;
inline const char* const kLlvmMc = TESSERA_LLVM_MC;
inline const char* const kObjcopy = TESSERA_LLVM_OBJCOPY;
inline const char* const kInputs = TESSERA_SIM_TEST_INPUTS;

inline void requireTool(const char* path, const char* name) {
  INFO(name << " is a required dependency (Debian package clang-14 / lld-14 / llvm-14); CMake found: " << path);
  REQUIRE(std::string(path).find("NOTFOUND") == std::string::npos);
  REQUIRE(std::filesystem::exists(path));
}

// A fresh directory under the system temp dir, removed at scope exit.
class TempDir {
public:
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "tessera-sim-test-XXXXXX").string();
    REQUIRE(mkdtemp(templ.data()) != nullptr);
    path_ = templ;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
  std::filesystem::path path_;
};

inline void run(const std::string& command) {
  INFO("command: " << command);
  REQUIRE(std::system(command.c_str()) == 0);
}

inline std::vector<uint8_t> readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline std::string input(const std::string& name) { return std::string(kInputs) + "/" + name; }

// Assembles test/unit/sim/Inputs/<name> (RV32IM, no linker relaxation, so
// every branch resolves without a linker) and returns its .text bytes.
inline std::vector<uint8_t> assemble(const TempDir& dir, const std::string& name) {
  requireTool(kLlvmMc, "llvm-mc-14");
  requireTool(kObjcopy, "llvm-objcopy-14");
  const std::string obj = dir.file(name + ".o"), bin = dir.file(name + ".bin");
  run(std::string(kLlvmMc) + " -triple=riscv32 -mattr=+m,-relax -filetype=obj '" + input(name) + "' -o '" + obj + "'");
  run(std::string(kObjcopy) + " -O binary --only-section=.text '" + obj + "' '" + bin + "'");
  return readBytes(bin);
}

} // namespace sim_test
