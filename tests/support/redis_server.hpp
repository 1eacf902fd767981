// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once
// A real redis-server for one test: started on a free loopback port in a temporary folder,
// stopped (SIGKILL, after SIGCONT) when it goes out of scope. Nothing is faked: the tests see the
// server's own replies and failures. Where redis-server is missing a test is skipped with a
// warning, or fails when AITUNE_REQUIRE_REDIS=1 (CI).

#include <arpa/inet.h>
#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace aitune::testing {

/// redis-server on PATH (or /usr/bin), if there is one.
inline std::optional<std::string> redis_server_program() {
  const char* path = std::getenv("PATH");
  std::string folders = path != nullptr ? path : "";
  folders += ":/usr/bin:/usr/sbin";
  std::size_t start = 0;
  while (start <= folders.size()) {
    const std::size_t end = std::min(folders.find(':', start), folders.size());
    const std::filesystem::path candidate =
        std::filesystem::path(folders.substr(start, end - start)) / "redis-server";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return std::nullopt;
}

/// Whether a missing redis-server must fail the run (AITUNE_REQUIRE_REDIS=1) rather than skip.
inline bool redis_required() {
  const char* required = std::getenv("AITUNE_REQUIRE_REDIS");
  return required != nullptr && std::string(required) == "1";
}

/// A loopback port nobody listens on now (the kernel's choice of a free one).
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t size = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("no free loopback port");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

class RedisServer {
 public:
  /// Extra redis-server arguments: {"--requirepass", "pw"}, {"--maxmemory", "1mb"}, ...
  explicit RedisServer(std::vector<std::string> extra = {})
      : program_(redis_server_program().value_or("")), extra_(std::move(extra)),
        port_(free_loopback_port()), dir_(std::filesystem::temp_directory_path() /
                                          fmt::format("aitune_redis_{}_{}", ::getpid(), port_)) {
    if (program_.empty()) throw std::runtime_error("redis-server is not installed");
    std::filesystem::create_directories(dir_);
    start();
  }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;
  ~RedisServer() {
    kill_now();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  [[nodiscard]] int port() const noexcept { return port_; }
  [[nodiscard]] std::string url(int db = 0) const {
    return fmt::format("redis://127.0.0.1:{}/{}", port_, db);
  }

  /// Starts it (again) on the same port, and waits until it answers.
  void start() {
    std::vector<std::string> args{program_,
                                  "--port",
                                  std::to_string(port_),
                                  "--bind",
                                  "127.0.0.1",
                                  "--save",
                                  "",
                                  "--appendonly",
                                  "no",
                                  "--dir",
                                  dir_.string(),
                                  "--logfile",
                                  (dir_ / "redis.log").string()};
    args.insert(args.end(), extra_.begin(), extra_.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (std::string& arg : args)
        argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    for (int tries = 0; tries < 250; ++tries) {
      if (answers()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    throw std::runtime_error(fmt::format("redis-server did not answer on port {}", port_));
  }

  /// Kills it (its data is lost: it keeps none on disk).
  void kill_now() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  void pause() const { ::kill(pid_, SIGSTOP); }
  void resume() const { ::kill(pid_, SIGCONT); }

  /// One command on a connection of the test's own (a password given as `auth`): its reply as
  /// text ("(nil)" for none, "(error) ..." for an error).
  [[nodiscard]] std::string command(const std::vector<std::string>& args,
                                    const std::vector<std::string>& auth = {}) const {
    redisContext* context = redisConnect("127.0.0.1", port_);
    if (context == nullptr || context->err != 0) {
      if (context != nullptr) redisFree(context);
      return "(unreachable)";
    }
    const auto run = [&](const std::vector<std::string>& words) {
      std::vector<const char*> argv;
      std::vector<std::size_t> lengths;
      for (const std::string& word : words) {
        argv.push_back(word.data());
        lengths.push_back(word.size());
      }
      auto* reply = static_cast<redisReply*>(
          redisCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lengths.data()));
      std::string text = "(unreachable)";
      if (reply != nullptr) {
        if (reply->type == REDIS_REPLY_NIL)
          text = "(nil)";
        else if (reply->type == REDIS_REPLY_INTEGER)
          text = std::to_string(reply->integer);
        else if (reply->type == REDIS_REPLY_ERROR)
          text = "(error) " + std::string(reply->str, reply->len);
        else if (reply->str != nullptr)
          text = std::string(reply->str, reply->len);
        else
          text = "(array of " + std::to_string(reply->elements) + ")";
        freeReplyObject(reply);
      }
      return text;
    };
    if (!auth.empty()) {
      std::vector<std::string> words{"AUTH"};
      words.insert(words.end(), auth.begin(), auth.end());
      (void)run(words);
    }
    std::string text = run(args);
    redisFree(context);
    return text;
  }

 private:
  [[nodiscard]] bool answers() const {
    const std::string reply = command({"PING"});
    return reply == "PONG" || reply.find("NOAUTH") != std::string::npos;
  }

  std::string program_;
  std::vector<std::string> extra_;
  int port_;
  std::filesystem::path dir_;
  pid_t pid_ = -1;
};

}  // namespace aitune::testing

/// Skips the test (a warning) where redis-server is missing, or fails it when CI requires it.
#define AITUNE_REQUIRE_REDIS_SERVER()                                                              \
  do {                                                                                             \
    if (!aitune::testing::redis_server_program()) {                                                \
      if (aitune::testing::redis_required())                                                       \
        FAIL("redis-server is missing (AITUNE_REQUIRE_REDIS=1)");                                  \
      WARN("redis-server is missing: skipped (install redis-server, tools/install-deps.sh)");      \
      return;                                                                                      \
    }                                                                                              \
  } while (false)
