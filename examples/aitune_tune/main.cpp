// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// aitune-tune: tunes a model file (a torch.export .pt2 archive or a TorchScript file) on random
// batch-size-1 inputs and prints the report. Exit codes: 0 success, 2 usage error (with the usage
// text), 1 any other failure, 128 + N when signal N (SIGINT, SIGTERM) stopped the tuning.
#include "options.hpp"
#include "output.hpp"
#include "run.hpp"
#include <aitune/torch.hpp>

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stop_token>
#include <string>
#include <thread>

namespace aitune_tune {
namespace {

// ---- signals: SIGINT and SIGTERM stop the tuning cleanly ----------------------------------
//
// The handler only records the signal and wakes a watcher thread through a pipe (both are
// async-signal-safe); the watcher requests the stop, which the strategy honours within one call
// of each backend. The tuning then unwinds normally: nothing is half-written, no temporary file
// is left. The handler is reset once it has run, so a second signal ends the process at once
// (for a model call that never returns).

std::atomic<int> received_signal{0};
int signal_pipe[2] = {-1, -1};

extern "C" void record_signal(int number) {
  const int saved_errno = errno;  // the interrupted thread's
  received_signal.store(number);
  // Either signal, once handled, leaves both to their default action: the next one ends the
  // process (SA_RESETHAND would reset only the one that arrived).
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  const char byte = 1;
  (void)!write(signal_pipe[1], &byte, 1);
  errno = saved_errno;
}

void stop_on_signals(std::stop_source source) {
  // A closed pipe is a failed write (EPIPE), not the end of the process: the JSON report and
  // the cache are still written, and the exit code says what happened (tune_command).
  signal(SIGPIPE, SIG_IGN);
  if (pipe(signal_pipe) != 0) return;  // then the signals keep their default action
  struct sigaction action {};
  action.sa_handler = record_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  for (const int number : {SIGINT, SIGTERM}) {
    // A signal the parent set to be ignored stays ignored (a shell's background job, nohup).
    struct sigaction inherited {};
    if (sigaction(number, nullptr, &inherited) == 0 && inherited.sa_handler == SIG_IGN) continue;
    sigaction(number, &action, nullptr);
  }
  std::thread([source]() mutable {
    char byte = 0;
    while (read(signal_pipe[0], &byte, 1) < 0 && errno == EINTR) {
    }
    source.request_stop();
  }).detach();
}

/// The whole command; returns its exit code.
int tune_command(int argc, char** argv) {
  Options options;
  Environment environment = Environment::object();
  try {
    options = parse_arguments(argc, argv);
    std::stop_source stop;
    stop_on_signals(stop);
    const int code = run(options, environment, stop.get_token());
    // The report on standard output is the run's result: one that could not be written (a full
    // device: 1; a closed pipe: 141, as SIGPIPE would have) fails it, after the JSON report and
    // the cache are written.
    int failed_write = stdout_error.load();
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
      failed_write = failed_write != 0 ? failed_write : (errno != 0 ? errno : EIO);
    }
    if (failed_write != 0) {
      print_to_stderr("aitune-tune: error: the report could not be written to standard output: "
                      "{}\n",
                      std::strerror(failed_write));
      if (code != 0) return code;
      return failed_write == EPIPE ? 128 + SIGPIPE : 1;
    }
    // A signal that came once the decision was made (while it was stored, or waited for the
    // cache's lock, which the signal ends): the reports are written, and the exit code still
    // says the run was interrupted.
    if (const int number = received_signal.load(); number != 0 && code == 0) {
      print_to_stderr("aitune-tune: interrupted by {} after the decision: the reports are "
                      "written (the log above says whether the cache is)\n",
                      number == SIGTERM ? "SIGTERM" : "SIGINT");
      return 128 + number;
    }
    return code;
  } catch (const UsageError& error) {
    if (error.message.empty()) {
      print_to(stdout, "{}", error.help);
      return std::fflush(stdout) == 0 && std::ferror(stdout) == 0 ? 0 : 1;
    }
    print_to_stderr("aitune-tune: {}\n\n{}(aitune-tune --help lists every option)\n", error.message,
                    usage_lines);
    // With --json given, a usage error leaves the report too (the usage text promises it for
    // every failure): say, a backend the model lacks, or a sample whose batch is not 1.
    write_failed_report(options, environment, error.message, nullptr);
    return 2;
  } catch (const aitune::CancelledError& error) {
    const int number = received_signal.load();
    const std::string message =
        fmt::format("interrupted by {}: the tuning stopped before a decision",
                    number == SIGTERM ? "SIGTERM" : "SIGINT");
    print_to_stderr("aitune-tune: {}\n", message);
    write_failed_report(options, environment, message, error.report());
    return 128 + (number != 0 ? number : SIGINT);
  } catch (const aitune::NoCorrectBackendError& error) {
    if (error.report()) print_report("\n{}", aitune::render_table(*error.report()));
    print_to_stderr("aitune-tune: error: {}\n", error.what());
    write_failed_report(options, environment, error.what(), error.report());
    return 1;
  } catch (const aitune::Error& error) {  // our messages are written for people already
    print_to_stderr("aitune-tune: error: {}\n", error.what());
    write_failed_report(options, environment, error.what(), nullptr);
    return 1;
  } catch (const std::exception& error) {
    const std::string message = aitune::lt::summarize_error(error);
    print_to_stderr("aitune-tune: error: {}\n", message);
    write_failed_report(options, environment, message, nullptr);
    return 1;
  }
}

/// Ends the process without running the static destructors of LibTorch's libraries: they took
/// 0.10 s of a 0.52 s cache hit here (measured side by side), and free nothing a process about
/// to end needs freed (clang's driver skips the same work at exit). Everything
/// the command writes is closed by then (the report files are closed, the model and the tuned
/// backend destroyed, inside tune_command) but for the standard streams, flushed here.
/// A sanitizer build exits normally, so that LeakSanitizer still checks the run.
[[noreturn]] void exit_now(int code) {
  std::fflush(nullptr);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  std::exit(code);
#else
  std::_Exit(code);
#endif
}

}  // namespace
}  // namespace aitune_tune

int main(int argc, char** argv) {
  aitune_tune::exit_now(aitune_tune::tune_command(argc, argv));
}
