#pragma once
// Test helper: a blocking loopback TCP client that shows the server's exact bytes and how
// the connection ended (EOF vs reset). Every read is bounded (5 s).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

namespace inferscope::test {

// A blocking loopback client: enough HTTP to check the server's bytes exactly.
class RawClient {
 public:
  explicit RawClient(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return connected_; }
  void send(const std::string& s) { ASSERT_EQ(::send(fd_, s.data(), s.size(), 0), ssize_t(s.size())); }
  void close() {
    ::close(fd_);
    fd_ = -1;
  }

  // Reads until `until` appears in what was read, the peer closes, or timeout_ms pass.
  // Returns what was read; last_errno() tells how it ended (0 = EOF or found).
  std::string read_until(const std::string& until, int timeout_ms = 5000) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      if (!until.empty() && buf_.find(until) != std::string::npos) break;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char tmp[4096];
      ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
      if (n < 0) {
        err_ = errno;
        break;
      }
      if (n == 0) {
        eof_ = true;
        break;
      }
      buf_.append(tmp, static_cast<std::size_t>(n));
    }
    std::string out;
    auto pos = until.empty() ? std::string::npos : buf_.find(until);
    if (pos == std::string::npos) {
      out.swap(buf_);
    } else {
      out = buf_.substr(0, pos + until.size());
      buf_.erase(0, pos + until.size());
    }
    return out;
  }
  int last_errno() const { return err_; }
  bool eof() const { return eof_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string buf_;
  int err_ = 0;
  bool eof_ = false;
};


}  // namespace inferscope::test
