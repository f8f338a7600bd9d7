// tools/cli/watched_child.h — runs a piece of the CLI in a forked child process and watches it
// from the parent, for work that calls code we do not trust (a vendor's plugin): the child says
// which phase it enters; the parent gives each phase a deadline, keeps the child's stdout, and
// afterwards knows whether the work finished, exited early, was killed by a signal, or hung — and
// in which phase. Nothing the child does can crash, hang or silently end the parent.
#pragma once

#include <functional>
#include <string>

namespace hwinfer::cli {

// Handed to the child's work: call it with a short name ("plugin_init", "device_open(0)") before
// each step that may crash or hang.
using PhaseReporter = std::function<void(const std::string& phase)>;

struct ChildOutcome {
  enum class Kind {
    kFinished,  // the work returned; |exit_code| is what it returned
    kExited,    // the process exited before the work returned (a plugin called exit)
    kSignaled,  // killed by |signal_number|
    kTimedOut,  // |phase| did not end within the deadline; the child was killed
  };
  Kind kind = Kind::kFinished;
  int exit_code = 0;
  int signal_number = 0;
  std::string phase;        // the last phase the child reported ("" before the first)
  std::string stdout_text;  // what the child wrote to stdout
};

// Forks; the child redirects stdout into a pipe, restores the default action of the crash
// signals (so a crash is reported as what it is, not as a sanitizer's report of it), runs
// |work| and exits with its result. The parent kills the child when one phase lasts longer than
// |phase_timeout_s|. The child's stderr is the parent's. Returns kExited with exit_code -1 and
// the reason in |phase| when the child cannot be started.
ChildOutcome RunWatched(const std::function<int(const PhaseReporter&)>& work,
                        double phase_timeout_s);

// "SIGSEGV", "SIGABRT", ... ("signal N" for others).
std::string SignalName(int signal_number);

}  // namespace hwinfer::cli
