#include "inferscope/net/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <deque>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <fmt/format.h>

#include "inferscope/core/text.h"

namespace inferscope::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

namespace {

// While a response streams we keep one read pending to notice a peer that goes away.
// Bytes it reads (a pipelined next request) stay in the connection's buffer; past this
// many we stop reading until the response ends.
constexpr std::size_t kMaxPipelinedBytes = 1u << 20;
constexpr std::size_t kWatchReadBytes = 4096;
constexpr std::size_t kMaxHeaderBytes = 64u << 10;

}  // namespace

std::string_view HttpRequest::path() const {
  std::string_view t = target;
  return t.substr(0, t.find('?'));
}

std::string_view HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (ascii_iequals(k, name)) return v;
  }
  return {};
}

bool HttpRequest::has_header(std::string_view name) const {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const auto& h) { return ascii_iequals(h.first, name); });
}

void ResponseStream::respond(int status, const Headers& headers, std::string body) {
  Headers h = headers;
  h.emplace_back("Content-Length", std::to_string(body.size()));
  start(status, h, false);
  write(std::move(body));
  finish();
}

class Connection;

// Per io thread: its io_context and the connections living on it (touched only by that
// thread, so no lock).
struct IoThread {
  asio::io_context ioc{1};
  std::unordered_map<Connection*, std::weak_ptr<Connection>> connections;
};

// One TCP connection; serves its requests one after another. Lives on one io thread.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, IoThread& thread, const Handler& handler,
             std::size_t max_body, std::atomic<std::size_t>& open_count)
      : socket_(std::move(socket)),
        thread_(thread),
        handler_(handler),
        max_body_(max_body),
        open_count_(open_count) {}

  void begin() {
    thread_.connections.emplace(this, weak_from_this());
    open_count_.fetch_add(1, std::memory_order_relaxed);
    error_code ec;
    socket_.set_option(tcp::no_delay(true), ec);  // every chunk leaves when written
    do_read();
  }

  asio::io_context& io() { return thread_.ioc; }

  // --- response API, forwarded from StreamImpl; `gen` names the response -------------
  bool is_current(std::uint64_t gen) const { return !closed_ && gen == gen_ && !ended_; }

  void start(std::uint64_t gen, int status, const Headers& headers, bool chunked) {
    if (!is_current(gen) || started_) return;
    started_ = true;
    chunked_ = chunked;
    content_length_.reset();
    for (const auto& [k, v] : headers) {
      if (ascii_iequals(k, "Content-Length")) {
        std::uint64_t n = 0;
        auto r = std::from_chars(v.data(), v.data() + v.size(), n);
        if (r.ec == std::errc{}) content_length_ = n;
      }
    }
    if (!chunked_ && !content_length_) keep_alive_ = false;  // body ends at close
    std::string head;
    head.reserve(256);
    auto reason = http::obsolete_reason(static_cast<http::status>(status));
    fmt::format_to(std::back_inserter(head), "HTTP/1.1 {} {}\r\n", status,
                   std::string_view(reason.data(), reason.size()));
    for (const auto& [k, v] : headers) fmt::format_to(std::back_inserter(head), "{}: {}\r\n", k, v);
    if (chunked_) head += "Transfer-Encoding: chunked\r\n";
    if (!keep_alive_) head += "Connection: close\r\n";
    head += "\r\n";
    enqueue(std::move(head));
  }

  void write(std::uint64_t gen, std::string data) {
    if (!is_current(gen) || data.empty()) return;
    if (!started_) start(gen, 200, {}, true);
    body_bytes_ += data.size();
    if (chunked_) {
      std::string framed;
      framed.reserve(data.size() + 12);
      fmt::format_to(std::back_inserter(framed), "{:x}\r\n", data.size());
      framed += data;
      framed += "\r\n";
      enqueue(std::move(framed));
    } else {
      enqueue(std::move(data));
    }
  }

  enum class End { none, finish, reset, truncate };

  void end(std::uint64_t gen, End how) {
    if (!is_current(gen)) return;
    // A reset or truncation before start() sends nothing at all: "closed without reply".
    if (!started_ && how == End::finish) start(gen, 200, {{"Content-Length", "0"}}, false);
    ended_ = true;
    on_close_ = nullptr;  // the handler ended it: no abandonment callback
    end_ = how;
    if (how == End::finish) {
      if (chunked_) {
        enqueue("0\r\n\r\n");
      } else if (content_length_ && *content_length_ != body_bytes_) {
        keep_alive_ = false;  // wrong length: the framing is broken, don't reuse
      }
    }
    if (!writing_) after_drain();
  }

  bool closed(std::uint64_t gen) const { return !is_current(gen); }
  void set_on_close(std::uint64_t gen, std::function<void()> cb) {
    if (is_current(gen)) on_close_ = std::move(cb);
  }
  std::size_t body_bytes(std::uint64_t gen) const { return gen == gen_ ? body_bytes_ : 0; }

  // The handler dropped its last reference to an unfinished response.
  void dropped(std::uint64_t gen) {
    if (is_current(gen)) end(gen, End::truncate);
  }

  // Server stop: abandon whatever is in flight.
  void shutdown() { close(/*abandoned=*/true, /*reset=*/false); }

 private:
  void do_read() {
    parser_.emplace();
    parser_->body_limit(max_body_);
    parser_->header_limit(kMaxHeaderBytes);
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](error_code ec, std::size_t) {
                       self->on_read(ec);
                     });
  }

  void on_read(error_code ec) {
    if (closed_) return;
    if (ec) {
      if (ec == http::error::end_of_stream || ec == asio::error::eof ||
          ec == asio::error::operation_aborted || ec == asio::error::connection_reset) {
        close(false, false);
        return;
      }
      // Malformed or oversized request: say so once and close.
      keep_alive_ = false;
      ended_ = true;
      end_ = End::finish;
      std::string_view msg = ec == http::error::body_limit ? "413 Payload Too Large"
                                                           : "400 Bad Request";
      enqueue(fmt::format("HTTP/1.1 {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", msg));
      return;
    }
    auto msg = parser_->release();
    parser_.reset();
    HttpRequest req;
    req.t_received_ns = monotonic_now_ns();
    req.method = std::string(msg.method_string());
    req.target = std::string(msg.target());
    for (const auto& f : msg) {
      req.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    }
    req.body = std::move(msg.body());
    keep_alive_ = msg.keep_alive();

    ++gen_;
    started_ = ended_ = chunked_ = false;
    body_bytes_ = 0;
    end_ = End::none;
    on_close_ = nullptr;
    watch();
    handler_(req, make_stream());
  }

  std::shared_ptr<ResponseStream> make_stream();

  void watch() {
    if (watching_ || closed_ || buffer_.size() >= kMaxPipelinedBytes) return;
    watching_ = true;
    socket_.async_read_some(buffer_.prepare(kWatchReadBytes),
                            [self = shared_from_this()](error_code ec, std::size_t n) {
                              self->on_watch(ec, n);
                            });
  }

  void on_watch(error_code ec, std::size_t n) {
    watching_ = false;
    if (closed_) return;
    if (ec && ec != asio::error::operation_aborted) {
      close(/*abandoned=*/!ended_, false);  // peer went away mid-response
      return;
    }
    if (!ec) buffer_.commit(n);
    if (reading_next_) {
      reading_next_ = false;
      do_read();
    } else if (!ended_ || writing_) {
      watch();
    }
  }

  void enqueue(std::string bytes) {
    queue_.push_back(std::move(bytes));
    if (!writing_) flush();
  }

  void flush() {
    writing_ = true;
    inflight_.clear();
    bufs_.clear();
    // Gather everything queued into one write: fewer syscalls under load.
    while (!queue_.empty() && inflight_.size() < 64) {
      inflight_.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    for (const auto& s : inflight_) bufs_.emplace_back(s.data(), s.size());
    asio::async_write(socket_, bufs_, [self = shared_from_this()](error_code ec, std::size_t) {
      self->on_write(ec);
    });
  }

  void on_write(error_code ec) {
    writing_ = false;
    if (closed_) return;
    if (ec) {
      close(/*abandoned=*/end_ == End::none, false);
      return;
    }
    if (!queue_.empty()) {
      flush();
      return;
    }
    if (ended_) after_drain();
  }

  // Every queued byte of an ended response is written: do what the end asked for.
  void after_drain() {
    switch (end_) {
      case End::none:
        return;
      case End::reset:
        close(false, /*reset=*/true);
        return;
      case End::truncate:
        close(false, false);
        return;
      case End::finish:
        if (!keep_alive_) {
          error_code ignore;
          socket_.shutdown(tcp::socket::shutdown_send, ignore);
          close(false, false);
        } else if (watching_) {
          reading_next_ = true;  // on_watch starts the next read once the watch returns
          error_code ignore;
          socket_.cancel(ignore);
        } else {
          do_read();
        }
        return;
    }
  }

  void close(bool abandoned, bool reset) {
    if (closed_) return;
    closed_ = true;
    error_code ignore;
    if (reset) socket_.set_option(asio::socket_base::linger(true, 0), ignore);
    socket_.close(ignore);
    thread_.connections.erase(this);
    open_count_.fetch_sub(1, std::memory_order_relaxed);
    if (abandoned && on_close_) {
      auto cb = std::move(on_close_);
      on_close_ = nullptr;
      cb();
    }
    on_close_ = nullptr;
  }

  tcp::socket socket_;
  IoThread& thread_;
  const Handler& handler_;
  std::size_t max_body_;
  std::atomic<std::size_t>& open_count_;

  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;

  std::deque<std::string> queue_;
  std::vector<std::string> inflight_;
  std::vector<asio::const_buffer> bufs_;
  bool writing_ = false;
  bool watching_ = false;
  bool reading_next_ = false;
  bool closed_ = false;

  // Current response.
  std::uint64_t gen_ = 0;
  bool started_ = false;
  bool ended_ = false;
  bool chunked_ = false;
  bool keep_alive_ = true;
  std::optional<std::uint64_t> content_length_;
  std::size_t body_bytes_ = 0;
  End end_ = End::none;
  std::function<void()> on_close_;
};

namespace {

// The handler's view of one response on a Connection.
class StreamImpl final : public ResponseStream {
 public:
  StreamImpl(std::shared_ptr<Connection> c, std::uint64_t gen) : c_(std::move(c)), gen_(gen) {}
  ~StreamImpl() override { c_->dropped(gen_); }

  asio::io_context& io() override { return c_->io(); }
  void start(int status, const Headers& headers, bool chunked) override {
    c_->start(gen_, status, headers, chunked);
  }
  void write(std::string data) override { c_->write(gen_, std::move(data)); }
  void finish() override { c_->end(gen_, Connection::End::finish); }
  void abort_reset() override { c_->end(gen_, Connection::End::reset); }
  void close_without_end() override { c_->end(gen_, Connection::End::truncate); }
  bool closed() const override { return c_->closed(gen_); }
  void on_close(std::function<void()> cb) override { c_->set_on_close(gen_, std::move(cb)); }
  std::size_t body_bytes_written() const override { return c_->body_bytes(gen_); }

 private:
  std::shared_ptr<Connection> c_;
  std::uint64_t gen_;
};

}  // namespace

std::shared_ptr<ResponseStream> Connection::make_stream() {
  return std::make_shared<StreamImpl>(shared_from_this(), gen_);
}

struct HttpServer::Impl {
  HttpServerOptions opt;
  Handler handler;
  std::vector<std::unique_ptr<IoThread>> threads;
  std::optional<tcp::acceptor> acceptor;
  std::optional<asio::steady_timer> accept_retry;
  std::vector<std::thread> workers;  // io threads started by start()/run()
  std::atomic<std::size_t> open{0};
  std::atomic<bool> stopped{false};
  std::atomic<bool> running{false};  // start() or run() was called
  std::size_t next_thread = 0;
  std::uint16_t port = 0;

  void accept() {
    IoThread& t = *threads[next_thread];
    next_thread = (next_thread + 1) % threads.size();
    acceptor->async_accept(t.ioc, [this, &t](error_code ec, tcp::socket s) {
      if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
      if (ec) {
        // Out of descriptors (EMFILE) and the like: back off instead of spinning.
        accept_retry->expires_after(std::chrono::milliseconds(20));
        accept_retry->async_wait([this](error_code e) {
          if (!e && acceptor->is_open()) accept();
        });
        return;
      }
      // The socket was created on t's io_context; start it on t's thread.
      asio::post(t.ioc, [this, &t, sock = std::move(s)]() mutable {
        if (stopped.load()) return;
        std::make_shared<Connection>(std::move(sock), t, handler, opt.max_body_bytes, open)
            ->begin();
      });
      accept();
    });
  }
};

HttpServer::HttpServer(HttpServerOptions opt, Handler handler) : impl_(std::make_shared<Impl>()) {
  impl_->opt = std::move(opt);
  impl_->handler = std::move(handler);
  const int n = std::max(1, impl_->opt.threads);
  for (int i = 0; i < n; ++i) impl_->threads.push_back(std::make_unique<IoThread>());
  auto& ioc0 = impl_->threads[0]->ioc;
  error_code ec;
  auto addr = asio::ip::make_address(impl_->opt.address, ec);
  if (ec) throw std::runtime_error(fmt::format("bad listen address '{}'", impl_->opt.address));
  tcp::endpoint ep(addr, impl_->opt.port);
  impl_->acceptor.emplace(ioc0);
  impl_->accept_retry.emplace(ioc0);
  auto& acc = *impl_->acceptor;
  acc.open(ep.protocol(), ec);
  if (!ec) acc.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acc.bind(ep, ec);
  if (!ec) acc.listen(impl_->opt.backlog, ec);
  if (ec) {
    throw std::runtime_error(fmt::format("cannot listen on {}:{}: {}", impl_->opt.address,
                                         impl_->opt.port, ec.message()));
  }
  impl_->port = acc.local_endpoint().port();
  impl_->accept();
}

HttpServer::~HttpServer() {
  stop();
  for (auto& w : impl_->workers) {
    if (w.joinable()) w.join();
  }
}

std::uint16_t HttpServer::port() const { return impl_->port; }
const std::string& HttpServer::address() const { return impl_->opt.address; }
std::string HttpServer::base_url() const {
  return fmt::format("http://{}:{}", impl_->opt.address, impl_->port);
}
asio::io_context& HttpServer::io() { return impl_->threads[0]->ioc; }
std::size_t HttpServer::open_connections() const {
  return impl_->open.load(std::memory_order_relaxed);
}

void HttpServer::start() {
  impl_->running = true;
  for (auto& t : impl_->threads) {
    impl_->workers.emplace_back([&ioc = t->ioc] {
      auto guard = asio::make_work_guard(ioc);
      ioc.run();
    });
  }
}

void HttpServer::run() {
  impl_->running = true;
  for (std::size_t i = 1; i < impl_->threads.size(); ++i) {
    impl_->workers.emplace_back([&ioc = impl_->threads[i]->ioc] {
      auto guard = asio::make_work_guard(ioc);
      ioc.run();
    });
  }
  {
    auto& ioc = impl_->threads[0]->ioc;
    auto guard = asio::make_work_guard(ioc);
    ioc.run();
  }
  // The other io threads are joined by stop() or the destructor: never by two threads.
}

void HttpServer::stop() {
  if (impl_->stopped.exchange(true)) return;
  Impl* im = impl_.get();
  for (std::size_t i = 0; i < im->threads.size(); ++i) {
    IoThread* t = im->threads[i].get();
    asio::post(t->ioc, [im, t, i] {
      if (i == 0) {
        error_code ignore;
        im->acceptor->close(ignore);
        im->accept_retry->cancel();
      }
      std::vector<std::shared_ptr<Connection>> live;
      for (auto& [p, w] : t->connections) {
        if (auto c = w.lock()) live.push_back(std::move(c));
      }
      for (auto& c : live) c->shutdown();
      t->ioc.stop();
    });
  }
  const auto self = std::this_thread::get_id();
  for (auto& w : im->workers) {
    if (w.joinable() && w.get_id() != self) w.join();
  }
  if (!im->running.load()) {
    // Never started: nothing runs the posted closures, so close the acceptor here.
    error_code ignore;
    im->acceptor->close(ignore);
  }
}

}  // namespace inferscope::net
