#include "inferscope/testserver/script_server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>

#include <boost/asio/steady_timer.hpp>
#include <fmt/format.h>

#include "inferscope/core/text.h"

namespace inferscope::testserver {

namespace {

using SteadyTp = std::chrono::steady_clock::time_point;
// std::chrono::steady_clock is CLOCK_MONOTONIC on Linux: the same clock as monotonic_now_ns.
SteadyTp to_tp(Nanos t) { return SteadyTp(std::chrono::nanoseconds(t)); }

}  // namespace


namespace detail {
struct ScriptServerState {
  ScriptServerOptions opt;
  mutable std::mutex mu;  // guards the scripts and records below
  std::map<std::string, std::shared_ptr<const Script>, std::less<>> routes;
  std::map<std::string, std::deque<std::shared_ptr<const Script>>, std::less<>> queued;
  std::shared_ptr<const Script> fallback;
  std::vector<ReceivedRequest> records;
  std::atomic<std::size_t> count{0};
  // Stalled responses are kept open here (io thread only) until stop().
  std::vector<std::shared_ptr<net::ResponseStream>> stalled;
  std::unique_ptr<net::HttpServer> server;

  std::shared_ptr<const Script> pick(std::string_view path) {
    std::lock_guard lock(mu);
    if (auto q = queued.find(path); q != queued.end() && !q->second.empty()) {
      auto s = std::move(q->second.front());
      q->second.pop_front();
      return s;
    }
    if (auto r = routes.find(path); r != routes.end()) return r->second;
    return fallback;
  }

  void note_headers(long rec, Nanos t) {
    if (rec < 0) return;
    std::lock_guard lock(mu);
    records[static_cast<std::size_t>(rec)].t_headers_sent_ns = t;
  }
  void note_step(long rec, Nanos t) {
    if (rec < 0) return;
    std::lock_guard lock(mu);
    records[static_cast<std::size_t>(rec)].step_sent_ns.push_back(t);
  }
};
}  // namespace detail

using Impl = detail::ScriptServerState;

namespace {

// Plays one Script on one response, driven by a timer on the connection's io thread.
class Playback : public std::enable_shared_from_this<Playback> {
 public:
  Playback(Impl& impl, std::shared_ptr<const Script> script,
           std::shared_ptr<net::ResponseStream> stream, long rec, Nanos t_received)
      : impl_(impl),
        sc_(std::move(script)),
        s_(std::move(stream)),
        timer_(s_->io()),
        rec_(rec),
        due_(t_received + sc_->headers_delay_ns) {}

  // Does every action that is due, then waits for the next one.
  void run() {
    const std::size_t n = sc_->steps.size();
    while (phase_ <= n + 1) {
      if (phase_ > 0 && s_->closed()) return;  // the peer went away: nothing more to play
      if (due_ > monotonic_now_ns()) {
        timer_.expires_at(to_tp(due_));
        timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
          if (!ec) self->run();
        });
        return;
      }
      if (phase_ == 0) {
        if (sc_->ending == Ending::close_immediately) {
          s_->close_without_end();
          return;
        }
        send_headers();
      } else if (phase_ <= n) {
        send_step(sc_->steps[phase_ - 1].bytes);
      } else {
        end();
        return;
      }
      ++phase_;
      due_ += phase_ <= n ? sc_->steps[phase_ - 1].delay_ns : sc_->ending_delay_ns;
    }
  }

 private:
  void send_headers() {
    net::Headers h = sc_->headers;
    const bool has_length = std::any_of(h.begin(), h.end(), [](const auto& kv) {
      return ascii_iequals(kv.first, "Content-Length");
    });
    if (!sc_->chunked && !has_length && sc_->ending == Ending::finish && !sc_->stamp_send_time) {
      std::size_t len = 0;
      for (const auto& st : sc_->steps) len += st.bytes.size();
      h.emplace_back("Content-Length", std::to_string(len));
    }
    impl_.note_headers(rec_, monotonic_now_ns());
    s_->start(sc_->status, h, sc_->chunked);
  }

  void send_step(const std::string& bytes) {
    const Nanos t = monotonic_now_ns();
    if (sc_->stamp_send_time) {
      std::string b = bytes;
      const std::string stamp = fmt::format("{:019d}", t);
      for (auto p = b.find(kSendTimePlaceholder); p != std::string::npos;
           p = b.find(kSendTimePlaceholder, p + stamp.size())) {
        b.replace(p, kSendTimePlaceholder.size(), stamp);
      }
      s_->write(std::move(b));
    } else {
      s_->write(bytes);
    }
    impl_.note_step(rec_, t);
  }

  void end() {
    switch (sc_->ending) {
      case Ending::finish:
        s_->finish();
        return;
      case Ending::reset:
        s_->abort_reset();
        return;
      case Ending::close_without_end:
      case Ending::close_immediately:
        s_->close_without_end();
        return;
      case Ending::stall:
        impl_.stalled.push_back(s_);
        return;
    }
  }

  Impl& impl_;
  std::shared_ptr<const Script> sc_;
  std::shared_ptr<net::ResponseStream> s_;
  boost::asio::steady_timer timer_;
  long rec_;
  std::size_t phase_ = 0;  // 0: headers; 1..n: steps; n + 1: ending
  Nanos due_;
};

}  // namespace

ScriptServer::ScriptServer(ScriptServerOptions opt) : impl_(std::make_shared<Impl>()) {
  impl_->opt = std::move(opt);
  net::HttpServerOptions so;
  so.address = impl_->opt.address;
  so.port = impl_->opt.port;
  Impl* im = impl_.get();
  impl_->server = std::make_unique<net::HttpServer>(
      so, [im](const net::HttpRequest& req, std::shared_ptr<net::ResponseStream> s) {
        im->count.fetch_add(1, std::memory_order_relaxed);
        long rec = -1;
        if (im->opt.record_requests) {
          std::lock_guard lock(im->mu);
          rec = static_cast<long>(im->records.size());
          ReceivedRequest received;
          static_cast<net::HttpRequest&>(received) = req;
          im->records.push_back(std::move(received));
        }
        auto script = im->pick(req.path());
        if (!script) {
          s->respond(404, {{"Content-Type", "application/json"}},
                     R"({"error":{"message":"no script for this path","code":404}})");
          return;
        }
        std::make_shared<Playback>(*im, std::move(script), std::move(s), rec, req.t_received_ns)
            ->run();
      });
  impl_->server->start();
}

ScriptServer::~ScriptServer() { stop(); }

void ScriptServer::stop() {
  if (!impl_->server) return;
  impl_->server->stop();
  impl_->stalled.clear();  // io thread joined: safe to touch; must go before the server
  impl_->server.reset();
}

std::uint16_t ScriptServer::port() const { return impl_->server ? impl_->server->port() : 0; }
std::string ScriptServer::base_url() const { return fmt::format("http://{}:{}", impl_->opt.address, port()); }

void ScriptServer::route(const std::string& path, Script script) {
  std::lock_guard lock(impl_->mu);
  impl_->routes[path] = std::make_shared<const Script>(std::move(script));
}
void ScriptServer::enqueue(const std::string& path, Script script) {
  std::lock_guard lock(impl_->mu);
  impl_->queued[path].push_back(std::make_shared<const Script>(std::move(script)));
}
void ScriptServer::fallback(Script script) {
  std::lock_guard lock(impl_->mu);
  impl_->fallback = std::make_shared<const Script>(std::move(script));
}

std::vector<ReceivedRequest> ScriptServer::requests() const {
  std::lock_guard lock(impl_->mu);
  return impl_->records;
}
std::size_t ScriptServer::request_count() const { return impl_->count.load(); }
std::size_t ScriptServer::open_connections() const {
  return impl_->server ? impl_->server->open_connections() : 0;
}

}  // namespace inferscope::testserver
