#include "support/tool_output.hpp"

#include "support/file_io.hpp"
#include "support/version.hpp"

namespace tessera {

std::string versionString(std::string_view tool) { return std::string(tool) + " (Tessera) " + kVersion; }

std::ostream& toolError(std::ostream& err, std::string_view who) { return err << who << ": error: "; }

std::ostream& toolWarning(std::ostream& err, std::string_view who) { return err << who << ": warning: "; }

Expected<void> writeDepfile(const std::string& depfile, const std::vector<std::string>& targets,
                            const std::vector<std::string>& prerequisites) {
  std::string rule;
  for (const std::string& t : targets) rule += (rule.empty() ? "" : " ") + escapeMakeWord(t);
  rule += ":";
  for (const std::string& p : prerequisites)
    if (!p.empty()) rule += " " + escapeMakeWord(p);
  return writeFileAtomic(depfile, rule + "\n");
}

} // namespace tessera
