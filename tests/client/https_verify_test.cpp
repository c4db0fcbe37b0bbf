// HTTPS: certificates are verified unless the user says otherwise. A real TLS peer
// (`openssl s_server` with a self-signed certificate made for the test) on 127.0.0.1.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "inferscope/client/http_target.h"

namespace inferscope {
namespace {
namespace fs = std::filesystem;

std::uint16_t free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

bool accepts(std::uint16_t port) {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(s);
  return ok;
}

class TlsServer {
 public:
  TlsServer() {
    dir_ = fs::temp_directory_path() / ("inferscope-tls-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    cert_ = (dir_ / "cert.pem").string();
    const std::string key = (dir_ / "key.pem").string();
    const std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
                            "-addext subjectAltName=IP:127.0.0.1 -keyout " + key + " -out " + cert_ + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) return;
    port_ = free_port();
    pid_ = ::fork();
    if (pid_ == 0) {
      const std::string accept = "127.0.0.1:" + std::to_string(port_);
      ::execlp("openssl", "openssl", "s_server", "-quiet", "-www", "-accept", accept.c_str(), "-cert", cert_.c_str(),
               "-key", key.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 100 && !accepts(port_); ++i) ::usleep(50'000);  // ≤ 5 s
  }
  ~TlsServer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
    fs::remove_all(dir_);
  }
  bool up() const { return pid_ > 0 && accepts(port_); }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }
  const std::string& cert() const { return cert_; }

 private:
  fs::path dir_;
  std::string cert_;
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
};

// One request through a fresh target; returns its record.
RequestRecord one_request(HttpTargetOptions o) {
  o.protocol.model = "m";
  o.idle_timeout_ns = kNsPerSec;  // s_server answers no POST body: do not wait long
  o.proxy = "";
  auto target = make_http_target(o, SteadyClock::instance());
  GenRequest req;
  req.prompt = " hello";
  req.max_tokens = 4;
  RequestRecord rec;
  rec.t_sched = SteadyClock::instance().now_ns();
  target->submit(req, rec);
  std::vector<RequestRecord*> done;
  const Nanos deadline = SteadyClock::instance().now_ns() + 10 * kNsPerSec;
  while (done.empty() && SteadyClock::instance().now_ns() < deadline)
    target->poll(SteadyClock::instance().now_ns() + 100 * kNsPerMs, done);
  EXPECT_EQ(done.size(), 1u);
  return rec;
}

}  // namespace

TEST(HttpsTransport, VerifiesCertificatesUnlessToldNotTo) {
  TlsServer server;
  ASSERT_TRUE(server.up()) << "openssl s_server did not start";
  HttpTargetOptions o;
  o.base_url = server.url();

  // Default: the self-signed certificate is rejected before any request is sent.
  RequestRecord rec = one_request(o);
  EXPECT_EQ(rec.error, ErrorClass::connect) << rec.error_detail;
  EXPECT_EQ(rec.http_status, 0);

  // The certificate's own CA bundle: verified, the TLS session is up and HTTP answers
  // (s_server's status page is no SSE stream, so the request still fails, but not at connect).
  o.ca_file = server.cert();
  rec = one_request(o);
  EXPECT_NE(rec.error, ErrorClass::connect) << rec.error_detail;
  EXPECT_GT(rec.net.tls_ns, 0);

  // --insecure: no verification.
  o.ca_file.clear();
  o.verify_tls = false;
  rec = one_request(o);
  EXPECT_NE(rec.error, ErrorClass::connect) << rec.error_detail;
}

}  // namespace inferscope
