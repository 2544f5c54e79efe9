// File IO with the "no partial outputs" rule: writes go to a temporary file
// beside the target and are renamed into place only when complete.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

// Reads a whole file; on failure returns nullopt and sets `error` (strerror text).
std::optional<std::string> readFile(const std::string& path, std::string& error);

// Writes `content` to `path` atomically. Returns false and sets `error` on failure;
// the target is then left untouched and no temporary file remains.
bool writeFileAtomic(const std::string& path, const std::string& content, std::string& error);

// A path as one word of a make rule (depfiles): spaces and '#' are
// backslash-escaped, '$' is doubled.
std::string escapeMakeWord(const std::string& path);

// The temporal epoch a path names: the number of its last directory
// component `temporal_epoch_<E>` (E decimal digits only, fitting 32 bits),
// the stage tools' layout; nullopt when there is none.
std::optional<uint32_t> epochFromPath(std::string_view path);

} // namespace tessera
