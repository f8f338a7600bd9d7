// watched_child.cpp — see watched_child.h. Two pipes: the child's stdout, and a phase channel of
// '\n'-terminated names, then "\x01done <code>" when the work returned. The parent polls both with
// the current phase's deadline and reaps the child. Must not leave a child running.
#include "watched_child.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hwinfer::cli {
namespace {

constexpr char kDoneMarker[] =
    "\x01"
    "done ";

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

[[noreturn]] void RunChild(const std::function<int(const PhaseReporter&)>& work, int out_fd,
                           int phase_fd) {
  ::dup2(out_fd, STDOUT_FILENO);
  ::close(out_fd);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
  const PhaseReporter report = [phase_fd](const std::string& phase) {
    std::fflush(stdout);
    WriteAll(phase_fd, phase + "\n");
  };
  const int code = work(report);
  std::fflush(stdout);
  WriteAll(phase_fd, std::string(kDoneMarker) + std::to_string(code) + "\n");
  ::close(phase_fd);
  // exit, not _exit: leak checkers and static destructors run in the child as they would have.
  std::exit(code);
}

// Reads what |fd| has into |into|; false at end of file (or on error).
bool Drain(int fd, std::string& into) {
  char buffer[4096];
  const ssize_t n = ::read(fd, buffer, sizeof(buffer));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  into.append(buffer, static_cast<size_t>(n));
  return true;
}

// Takes the complete lines of the phase channel: the last phase, and whether "done" came.
// Returns how many lines it took.
int TakePhases(std::string& pending, ChildOutcome& outcome, bool& finished) {
  int lines = 0;
  size_t newline = 0;
  while ((newline = pending.find('\n')) != std::string::npos) {
    ++lines;
    const std::string line = pending.substr(0, newline);
    pending.erase(0, newline + 1);
    if (line.rfind(kDoneMarker, 0) == 0) {
      finished = true;
      outcome.exit_code = std::atoi(line.c_str() + std::strlen(kDoneMarker));
    } else {
      outcome.phase = line;
    }
  }
  return lines;
}

}  // namespace

std::string SignalName(int signal_number) {
  switch (signal_number) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal " + std::to_string(signal_number);
  }
}

ChildOutcome RunWatched(const std::function<int(const PhaseReporter&)>& work,
                        double phase_timeout_s) {
  ChildOutcome outcome;
  int out_pipe[2] = {-1, -1}, phase_pipe[2] = {-1, -1};
  if (::pipe(out_pipe) != 0 || ::pipe(phase_pipe) != 0) {
    outcome.kind = ChildOutcome::Kind::kExited;
    outcome.exit_code = -1;
    outcome.phase = std::string("pipe: ") + std::strerror(errno);
    return outcome;
  }
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(out_pipe[0]);
    ::close(phase_pipe[0]);
    RunChild(work, out_pipe[1], phase_pipe[1]);
  }
  ::close(out_pipe[1]);
  ::close(phase_pipe[1]);
  if (pid < 0) {
    ::close(out_pipe[0]);
    ::close(phase_pipe[0]);
    outcome.kind = ChildOutcome::Kind::kExited;
    outcome.exit_code = -1;
    outcome.phase = std::string("fork: ") + std::strerror(errno);
    return outcome;
  }

  using Clock = std::chrono::steady_clock;
  const auto phase_budget = std::chrono::duration<double>(phase_timeout_s);
  Clock::time_point phase_start = Clock::now();
  std::string pending;
  bool finished = false, out_open = true, phase_open = true, timed_out = false;
  while (out_open || phase_open) {
    const double left_s =
        std::chrono::duration<double>(phase_budget - (Clock::now() - phase_start)).count();
    if (left_s <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2] = {{out_pipe[0], static_cast<short>(out_open ? POLLIN : 0), 0},
                     {phase_pipe[0], static_cast<short>(phase_open ? POLLIN : 0), 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(left_s * 1000) + 1);
    if (ready < 0 && errno != EINTR) break;
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      out_open = Drain(out_pipe[0], outcome.stdout_text);
    }
    if (phase_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      phase_open = Drain(phase_pipe[0], pending);
      // Every report starts a new deadline.
      if (TakePhases(pending, outcome, finished) > 0) phase_start = Clock::now();
    }
  }
  if (timed_out) ::kill(pid, SIGKILL);
  ::close(out_pipe[0]);
  ::close(phase_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    outcome.kind = ChildOutcome::Kind::kTimedOut;
  } else if (WIFSIGNALED(status)) {
    outcome.kind = ChildOutcome::Kind::kSignaled;
    outcome.signal_number = WTERMSIG(status);
  } else if (finished) {
    outcome.kind = ChildOutcome::Kind::kFinished;
    // The work's own code, unless the exit itself failed (a leak checker at exit, say).
    if (WIFEXITED(status) && WEXITSTATUS(status) != outcome.exit_code) {
      outcome.exit_code = WEXITSTATUS(status);
    }
  } else {
    outcome.kind = ChildOutcome::Kind::kExited;
    outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return outcome;
}

}  // namespace hwinfer::cli
