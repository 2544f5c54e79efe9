// File IO with the "no partial outputs" rule: writes go to a temporary file
// beside the target and are renamed into place only when complete.
#pragma once
#include "support/expected.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

// Reads a whole file; a failure's message is the strerror text.
Expected<std::string> readFile(const std::string& path);

// Writes `content` to `path` atomically. On failure the target is left
// untouched and no temporary file remains.
Expected<void> writeFileAtomic(const std::string& path, const std::string& content);

// writeFileAtomic unless `path` already holds exactly `content`: keeps the
// timestamp of an unchanged file, so what make or a stamp derives from it is
// not rebuilt.
Expected<void> writeIfChanged(const std::string& path, const std::string& content);

// A path as one word of a make rule (depfiles): spaces and '#' are
// backslash-escaped, '$' is doubled.
std::string escapeMakeWord(const std::string& path);

// The temporal epoch a path names: the number of its last directory
// component `temporal_epoch_<E>` (E decimal digits only, fitting 32 bits),
// the stage tools' layout; nullopt when there is none.
std::optional<uint32_t> epochFromPath(std::string_view path);

} // namespace tessera
