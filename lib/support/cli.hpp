// The command-line conventions every Tessera tool shares (CLI11): --help and
// --version print and exit 0; a usage error prints `<tool>: error: ...` and
// a hint, and exits 2.
#pragma once
#include <CLI/CLI.hpp>

#include <iostream>
#include <new>
#include <optional>
#include <string_view>
#include "support/tool_output.hpp"

namespace tessera {

// Returns the exit code when the tool should stop now, nullopt to go on.
inline std::optional<int> parseToolArgs(CLI::App& app, int argc, char** argv, std::string_view tool) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    toolError(std::cerr, tool) << e.what() << "\n"
              << "Run with --help for usage.\n";
    return 2;
  }
  return std::nullopt;
}

// Runs a tool's work, turning what escapes it into a one-line error and exit
// 1 instead of std::terminate's abort: running out of memory (a large
// netlist's reference tensors can outgrow the machine) and any other
// exception, which is a defect of the tool and is named as such.
template <class Fn>
int runGuarded(std::string_view tool, Fn&& fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    toolError(std::cerr, tool) << "out of memory (the machine or the process's memory limit could not hold this run)\n";
  } catch (const std::exception& e) {
    toolError(std::cerr, tool) << "internal error: " << e.what() << "\n";
  }
  return 1;
}

} // namespace tessera
