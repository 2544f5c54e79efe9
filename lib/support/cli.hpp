// The command-line conventions every Tessera tool shares (CLI11): --help and
// --version print and exit 0; a usage error prints `<tool>: error: ...` and
// a hint, and exits 2.
#pragma once
#include <CLI/CLI.hpp>

#include <iostream>
#include <optional>
#include <string_view>

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
    std::cerr << tool << ": error: " << e.what() << "\n"
              << "Run with --help for usage.\n";
    return 2;
  }
  return std::nullopt;
}

} // namespace tessera
