#pragma once
// A small HTTP/1.1 server on Boost.Beast/Asio for loopback test servers, the null-target
// benchmark server and the simulated engine's `sim serve`. Not a general web server: no
// TLS, no HTTP/2, no pipelining guarantees beyond "requests on one connection are served
// in order".
//
// Model
//   * One Handler is called once per request, on the io thread that owns the request's
//     connection, with the parsed request and a ResponseStream.
//   * The handler answers either at once (stream->respond(...)) or later: it keeps the
//     shared_ptr<ResponseStream>, schedules work with boost::asio::steady_timer on
//     stream->io(), and calls start()/write()/finish() from those callbacks. The
//     connection stays open (and reads no further request) until the response ends.
//   * A response ends with finish() (clean; the connection is reused when keep-alive),
//     abort_reset() (TCP RST), close_without_end() (truncated body), or by the peer going
//     away. Dropping the last shared_ptr to an unfinished stream closes the connection
//     without an end (like close_without_end()); "stall forever" = keep the pointer and
//     never write.
//
// Threading
//   * HttpServerOptions::threads io threads, each running its own io_context. A connection
//     lives on exactly one of them for its whole life; its Handler call, its ResponseStream
//     and every timer the handler creates on stream->io() run on that thread, so per-
//     request state needs no locking. State shared between connections (an engine model)
//     needs its own synchronisation when threads > 1 — or use threads = 1 (the default):
//     then everything, including the handler, runs on one thread.
//   * ResponseStream methods must be called on stream->io()'s thread. From another thread,
//     post: boost::asio::post(stream->io(), [s] { s->write("..."); }).
//   * HttpServer::start()/stop()/port() may be called from any thread, but not
//     concurrently with each other.
//
// Ownership
//   * HttpServer owns its io_contexts and threads; its destructor calls stop(). After
//     stop() no handler runs and every ResponseStream method is a no-op (closed() is
//     true). Release every shared_ptr<ResponseStream> and steady_timer your handler state
//     keeps BEFORE the HttpServer is destroyed: they refer to its io_contexts.
//   * Each start() begins a new response object: a stale ResponseStream from an earlier
//     request on the same keep-alive connection can never write into a later response.
//   * The Handler is copied into the server and must stay callable until stop() returns.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "inferscope/core/clock.h"

namespace inferscope::net {

using Headers = std::vector<std::pair<std::string, std::string>>;

// A parsed request. Header names keep the client's spelling; look-ups ignore case.
struct HttpRequest {
  std::string method;  // "GET", "POST", …
  std::string target;  // request-target as sent: path plus optional "?query"
  Headers headers;
  std::string body;
  Nanos t_received_ns = 0;  // CLOCK_MONOTONIC when the whole request had been read

  std::string_view path() const;  // target without "?query"
  // The first header named `name` (case-insensitive), or empty.
  std::string_view header(std::string_view name) const;
  bool has_header(std::string_view name) const;
};

class ResponseStream {
 public:
  virtual ~ResponseStream() = default;

  // The io_context of this connection's thread: schedule timers for this response here.
  virtual boost::asio::io_context& io() = 0;

  // Sends the status line and headers. chunked = true: Transfer-Encoding: chunked and
  // every write() is one chunk. chunked = false: if `headers` has Content-Length, the body
  // is exactly that long and the connection stays reusable; otherwise the body is
  // delimited by closing the connection (finish() closes it). The server adds
  // Connection/Transfer-Encoding as needed; don't put them in `headers`. Call once.
  virtual void start(int status, const Headers& headers, bool chunked) = 0;
  // Queues body bytes (one chunk when chunked). Empty data is ignored (an empty chunk
  // would end a chunked body). Calls after the response ended are ignored. A write()
  // or finish() before start() implies start(200, {}, chunked = write).
  virtual void write(std::string data) = 0;
  // Ends the body cleanly after all queued bytes: the terminating chunk when chunked,
  // then the next request is read (keep-alive) or the connection closed.
  virtual void finish() = 0;
  // After the queued bytes are written, closes with SO_LINGER 0 so the peer sees a TCP
  // RST ("connection reset by peer"). Before start(): nothing is sent.
  virtual void abort_reset() = 0;
  // After the queued bytes are written, closes the connection without the terminating
  // chunk (or short of Content-Length): a truncated stream. Graceful FIN, no RST.
  // Before start(): closes without sending any response.
  virtual void close_without_end() = 0;

  // Convenience: start(status, headers + Content-Length) + write(body) + finish().
  void respond(int status, const Headers& headers, std::string body);

  // True once the response ended or the connection closed (peer went away, server
  // stopped). Handlers streaming from timers should stop when this turns true.
  virtual bool closed() const = 0;
  // Called once, on the io thread, when the response is abandoned by the other side
  // before the handler ended it: peer went away, I/O error, server stop. Not called after
  // finish(), abort_reset() or close_without_end(). Replaces any earlier callback. Use it
  // to release engine-side state of a cancelled request. A peer that half-closes (EOF)
  // while its response streams counts as gone.
  virtual void on_close(std::function<void()> cb) = 0;
  // Bytes of body queued so far (excludes chunk framing).
  virtual std::size_t body_bytes_written() const = 0;
};

using Handler = std::function<void(const HttpRequest&, std::shared_ptr<ResponseStream>)>;

struct HttpServerOptions {
  std::string address = "127.0.0.1";  // bind address; "0.0.0.0" to listen everywhere
  std::uint16_t port = 0;             // 0 = ephemeral; read the real one from port()
  int threads = 1;                    // io threads (each its own io_context)
  std::size_t max_body_bytes = 64u << 20;
  int backlog = 4096;                 // listen() backlog; thousands of clients connect at once
};

class HttpServer {
 public:
  // Binds and listens at once (so port() is valid right away). Throws std::runtime_error
  // naming the address and port when it can't bind. Serves nothing until start()/run().
  HttpServer(HttpServerOptions opt, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  std::uint16_t port() const;
  const std::string& address() const;
  // "http://127.0.0.1:PORT"
  std::string base_url() const;

  // Call one of start() and run(), once.
  // Starts the io threads and returns.
  void start();
  // Serves on the calling thread as io thread 0 (other threads, if any, are started) until
  // stop() is called — from another thread, or from a handler / a closure posted to io()
  // (e.g. by a signal handler via boost::asio::signal_set).
  void run();
  // Stops accepting, closes every connection (handlers' on_close run on their threads),
  // stops the io threads and joins them — except the calling thread when stop() runs on an
  // io thread, and the thread inside run(), which returns by itself. Idempotent.
  void stop();

  // io_context of io thread 0 (the only one when threads == 1). For server-wide timers.
  boost::asio::io_context& io();

  // Connections currently open (for tests and benchmarks). Approximate while running.
  std::size_t open_connections() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace inferscope::net
