#include "support/subprocess.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace tessera {

std::string ProcessResult::describe() const {
  if (!started) return error;
  if (signal != 0) return "killed by signal " + std::to_string(signal);
  return "exit code " + std::to_string(exitCode);
}

namespace {

// Closes a descriptor once (EINTR on close must not be retried on Linux).
void closeFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Reads both pipes until both reach EOF, so neither child stream can fill
// its pipe and block the child while we wait on the other.
void drain(int outFd, int errFd, std::string& out, std::string& err) {
  char buf[65536];
  struct pollfd fds[2] = {{outFd, POLLIN, 0}, {errFd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  int open = 2;
  while (open > 0) {
    int n = ::poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        fds[i].fd = -1;  // EOF or error: stop polling this one
        --open;
      }
    }
  }
}

} // namespace

ProcessResult runProcess(const std::vector<std::string>& argv, const std::string& cwd) {
  ProcessResult r;
  if (argv.empty()) {
    r.error = "empty command";
    return r;
  }
  int outPipe[2] = {-1, -1}, errPipe[2] = {-1, -1};
  if (::pipe2(outPipe, O_CLOEXEC) != 0 || ::pipe2(errPipe, O_CLOEXEC) != 0) {
    r.error = std::string("cannot create a pipe: ") + std::strerror(errno);
    closeFd(outPipe[0]), closeFd(outPipe[1]), closeFd(errPipe[0]), closeFd(errPipe[1]);
    return r;
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid = -1;
  int rc = argv[0].find('/') == std::string::npos
               ? ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ)
               : ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  closeFd(outPipe[1]);
  closeFd(errPipe[1]);
  if (rc != 0) {
    r.error = "cannot run '" + argv[0] + "': " + std::strerror(rc);
    closeFd(outPipe[0]), closeFd(errPipe[0]);
    return r;
  }
  drain(outPipe[0], errPipe[0], r.out, r.err);
  closeFd(outPipe[0]);
  closeFd(errPipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      r.error = std::string("waitpid: ") + std::strerror(errno);
      return r;
    }
  }
  r.started = true;
  if (WIFEXITED(status)) {
    r.exitCode = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  return r;
}

std::string shellQuote(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) {
    if (!s.empty()) s += ' ';
    bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                   "0123456789-_./=:,+@%") == std::string::npos;
    if (plain) {
      s += a;
      continue;
    }
    s += '\'';
    for (char c : a) {
      if (c == '\'') s += "'\\''";
      else s += c;
    }
    s += '\'';
  }
  return s;
}

} // namespace tessera
