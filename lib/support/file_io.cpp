#include "support/file_io.hpp"

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace tessera {

Expected<std::string> readFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Failure{std::strerror(errno)};
  }
  if (S_ISDIR(st.st_mode)) {
    return Failure{"is a directory"};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Failure{std::strerror(errno)};
  }
  // One read into a buffer of the file's size (generated files are MBs: a
  // stringstream copied them three times), then whatever a growing file adds.
  std::string text(static_cast<size_t>(st.st_size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) {
    return Failure{"read error"};
  }
  if (in) {
    std::ostringstream rest;
    rest << in.rdbuf();
    text += rest.str();
  }
  return text;
}

Expected<void> writeFileAtomic(const std::string& path, const std::string& content) {
  // Unique per process and call: two threads writing one path never share a temp file.
  static std::atomic<uint64_t> serial{0};
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Failure{std::strerror(errno)};
  }
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      Failure failure{std::strerror(errno)};
      ::close(fd);
      ::unlink(tmp.c_str());
      return failure;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    Failure failure{std::strerror(errno)};
    ::unlink(tmp.c_str());
    return failure;
  }
  return {};
}

Expected<void> writeIfChanged(const std::string& path, const std::string& content) {
  if (auto old = readFile(path); old && *old == content) return {};
  return writeFileAtomic(path, content);
}

std::string escapeMakeWord(const std::string& path) {
  std::string out;
  for (char ch : path) {
    if (ch == ' ' || ch == '#') out += '\\';
    if (ch == '$') out += '$';
    out += ch;
  }
  return out;
}

std::optional<uint32_t> epochFromPath(std::string_view path) {
  constexpr std::string_view kPrefix = "temporal_epoch_";
  std::optional<uint32_t> found;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
    if (part.size() <= kPrefix.size() || part.substr(0, kPrefix.size()) != kPrefix) continue;
    uint32_t v = 0;
    auto [ptr, ec] = std::from_chars(part.data() + kPrefix.size(), part.data() + part.size(), v, 10);
    if (ec == std::errc() && ptr == part.data() + part.size()) found = v;
  }
  return found;
}

} // namespace tessera
