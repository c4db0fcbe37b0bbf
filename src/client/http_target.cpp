// The HTTP target: libcurl's multi-socket API on one epoll set, driven from the load
// loop's thread by poll(). See docs/client-transport.md for the design and its numbers.
//
// Event loop: curl tells us which sockets to watch (socket callback -> epoll_ctl) and
// when it next needs a timeout (timer callback); poll() sleeps in epoll_wait until a
// socket is ready or a timerfd (armed at the earliest of the caller's deadline, curl's
// timeout and our idle-timeout scan) fires, then hands the event to
// curl_multi_socket_action. Body bytes arrive in the write callback, where they are
// stamped with the clock and fed to the request's StreamDecoder.
#include "inferscope/client/http_target.h"

#include <curl/curl.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "client/http_common.h"

namespace inferscope {

namespace {

// After the decoder saw the protocol's end marker, wait this long for the HTTP body to
// end too (the terminating chunk usually follows in the same or the next read). Past it
// the request is complete anyway; the connection is dropped instead of reused.
constexpr Nanos kEndGraceNs = 20 * kNsPerMs;
// Body bytes kept from an error response (for its message) or a non-streamed response.
constexpr std::size_t kMaxErrorBody = 64u << 10;
constexpr std::size_t kMaxFullBody = 64u << 20;
constexpr int kMaxEvents = 512;

class HttpTarget;

// One in-flight request.
struct Transfer {
  HttpTarget* target = nullptr;
  CURL* easy = nullptr;
  RequestRecord* rec = nullptr;
  std::unique_ptr<StreamDecoder> decoder;
  std::string url;
  std::string body;  // request body: CURLOPT_POSTFIELDS does not copy
  std::string response;  // error body, or the whole body when not streaming
  std::string retry_after;
  char errbuf[CURL_ERROR_SIZE] = {};
  Nanos last_activity = 0;  // last byte (header or body) received
  Nanos end_seen = -1;      // when the decoder saw the end marker
  bool headers_done = false;
  bool connected = false;  // the connection (TCP, TLS) was up and the request about to go
  bool keep_text = false;
  long status = 0;
};

class HttpTarget final : public Target {
 public:
  HttpTarget(const HttpTargetOptions& opt, const Clock& clock) : opt_(opt), clock_(clock) {
    http_detail::global_init();
    base_url_ = opt_.base_url;
    while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    timerfd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (epfd_ < 0 || timerfd_ < 0) throw std::runtime_error("epoll/timerfd: " + std::string(strerror(errno)));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = timerfd_;
    epoll_ctl(epfd_, EPOLL_CTL_ADD, timerfd_, &ev);

    multi_ = curl_multi_init();
    curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &HttpTarget::socket_cb);
    curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &HttpTarget::timer_cb);
    curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
    // HTTP/1.1 only: one stream per connection, as the engines' own benchmarks use.
    curl_multi_setopt(multi_, CURLMOPT_PIPELINING, long{CURLPIPE_NOTHING});

    headers_ = curl_slist_append(headers_, "Content-Type: application/json");
    headers_ = curl_slist_append(headers_, "Accept: */*");
    headers_ = curl_slist_append(headers_, "Expect:");  // no 100-continue round trip
    if (!opt_.api_key.empty()) {
      const std::string auth = "Authorization: Bearer " + opt_.api_key;
      headers_ = curl_slist_append(headers_, auth.c_str());
    }
  }

  ~HttpTarget() override {
    for (Transfer* t : active_) {
      curl_multi_remove_handle(multi_, t->easy);
      curl_easy_cleanup(t->easy);
      delete t;
    }
    for (CURL* e : spare_) curl_easy_cleanup(e);
    curl_multi_cleanup(multi_);
    curl_slist_free_all(headers_);
    close(timerfd_);
    close(epfd_);
  }

  const Clock& clock() const override { return clock_; }
  std::size_t in_flight() const override { return active_.size() + ready_.size(); }

  void submit(const GenRequest& req, RequestRecord& rec) override {
    auto* t = new Transfer;
    t->target = this;
    t->rec = &rec;
    t->decoder = make_stream_decoder(opt_.api, opt_.counter, req.keep_text);
    HttpRequestSpec spec = build_request(opt_.api, req, opt_.protocol);
    t->url = base_url_ + spec.path;
    t->body = std::move(spec.body);
    t->keep_text = req.keep_text;
    if (rec.max_tokens < 0) rec.max_tokens = req.max_tokens;
    if (rec.input_tokens_requested < 0) rec.input_tokens_requested = req.input_tokens;

    t->easy = take_easy();
    CURL* e = t->easy;
    if (e == nullptr) {  // out of memory
      fail_submit(t, "curl_easy_init failed");
      return;
    }
    curl_easy_setopt(e, CURLOPT_URL, t->url.c_str());
    curl_easy_setopt(e, CURLOPT_PRIVATE, t);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers_);
    if (spec.method == "GET") {
      curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else {
      curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->body.data());
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t->body.size()));
    }
    http_detail::common_options(e, opt_.verify_tls, opt_.ca_file, opt_.proxy);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, long{CURL_HTTP_VERSION_1_1});
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &HttpTarget::write_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &HttpTarget::header_cb);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, &HttpTarget::prereq_cb);
    curl_easy_setopt(e, CURLOPT_PREREQDATA, t);
    if (opt_.connect_timeout_ns > 0) {
      curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, ms_ceil(opt_.connect_timeout_ns));
    }
    if (opt_.total_timeout_ns > 0) {
      curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, ms_ceil(opt_.total_timeout_ns));
    }

    rec.t_send = clock_.now_ns();
    t->last_activity = rec.t_send;
    if (curl_multi_add_handle(multi_, e) != CURLM_OK) {
      give_back_easy(e);
      fail_submit(t, "curl_multi_add_handle failed");
      return;
    }
    active_.insert(t);
    schedule_scan(t->last_activity + opt_.idle_timeout_ns);
    // Let curl start the request now (connect, or write on a reused connection), so
    // t_send is when the bytes leave, not when the loop next calls poll().
    int running = 0;
    curl_multi_socket_action(multi_, CURL_SOCKET_TIMEOUT, 0, &running);
    drain_done();
  }

  void poll(Nanos deadline_ns, std::vector<RequestRecord*>& finished) override {
    for (;;) {
      Nanos now = clock_.now_ns();
      if (curl_due_ >= 0 && curl_due_ <= now) {
        curl_due_ = -1;
        int running = 0;
        curl_multi_socket_action(multi_, CURL_SOCKET_TIMEOUT, 0, &running);
        drain_done();
        now = clock_.now_ns();
      }
      if (next_scan_ <= now) scan(now);
      if (!ready_.empty()) {
        finished.insert(finished.end(), ready_.begin(), ready_.end());
        ready_.clear();
        return;
      }
      if (now >= deadline_ns) return;

      Nanos wake = deadline_ns;
      if (curl_due_ >= 0) wake = std::min(wake, curl_due_);
      wake = std::min(wake, next_scan_);
      arm_timer(wake);
      epoll_event evs[kMaxEvents];
      const int n = epoll_wait(epfd_, evs, kMaxEvents, -1);
      if (n < 0 && errno != EINTR) return;  // cannot happen with valid fds; don't spin
      for (int i = 0; i < n; ++i) {
        const int fd = evs[i].data.fd;
        if (fd == timerfd_) {
          std::uint64_t expirations;
          [[maybe_unused]] auto r = read(timerfd_, &expirations, sizeof expirations);
          armed_ = -1;
          continue;
        }
        int mask = 0;
        if (evs[i].events & EPOLLIN) mask |= CURL_CSELECT_IN;
        if (evs[i].events & EPOLLOUT) mask |= CURL_CSELECT_OUT;
        if (evs[i].events & (EPOLLERR | EPOLLHUP)) mask |= CURL_CSELECT_ERR;
        int running = 0;
        curl_multi_socket_action(multi_, fd, mask, &running);
      }
      drain_done();
    }
  }

  void cancel_all() override {
    drain_done();  // outcomes curl already knows are real outcomes, not cancellations
    const Nanos now = clock_.now_ns();
    for (Transfer* t : std::vector<Transfer*>(active_.begin(), active_.end())) {
      t->rec->error = ErrorClass::cancelled;
      t->rec->error_detail = "cancelled";
      finish(t, now);
    }
  }

 private:
  // A request that could not even be handed to curl: returned by the next poll().
  void fail_submit(Transfer* t, const char* why) {
    RequestRecord& rec = *t->rec;
    if (rec.t_send < 0) rec.t_send = clock_.now_ns();
    rec.error = ErrorClass::connect;
    rec.error_detail = why;
    rec.t_done = clock_.now_ns();
    ready_.push_back(&rec);
    delete t;
  }

  static long ms_ceil(Nanos ns) { return static_cast<long>((ns + kNsPerMs - 1) / kNsPerMs); }

  CURL* take_easy() {
    if (spare_.empty()) return curl_easy_init();
    CURL* e = spare_.back();
    spare_.pop_back();
    curl_easy_reset(e);
    return e;
  }
  void give_back_easy(CURL* e) { spare_.push_back(e); }

  void schedule_scan(Nanos t) { next_scan_ = std::min(next_scan_, t); }

  // Arms the timerfd for `wake` unless an earlier, still pending wake-up is armed: that one
  // fires first and poll() re-arms then. Load loops pass a new deadline on every call;
  // this keeps the timerfd_settime syscall off the per-read path.
  void arm_timer(Nanos wake) {
    if (armed_ >= 0 && armed_ <= wake) return;
    armed_ = wake;
    itimerspec its{};
    // An absolute time in the past (or 0) would disarm or fire at once; clamp to >= 1 ns.
    const Nanos w = std::max<Nanos>(wake, 1);
    its.it_value.tv_sec = w / kNsPerSec;
    its.it_value.tv_nsec = w % kNsPerSec;
    timerfd_settime(timerfd_, TFD_TIMER_ABSTIME, &its, nullptr);
  }

  // Idle timeouts and end-marker grace periods. Runs when the earliest of them may have
  // passed; a pass over all transfers, so it sets the next scan at the earliest pending one.
  void scan(Nanos now) {
    Nanos next = std::numeric_limits<Nanos>::max();
    for (Transfer* t : std::vector<Transfer*>(active_.begin(), active_.end())) {
      if (t->end_seen >= 0) {
        if (now - t->end_seen >= kEndGraceNs) {
          fill_timings(t);
          complete_ok(t, t->end_seen);
          continue;
        }
        next = std::min(next, t->end_seen + kEndGraceNs);
      }
      if (opt_.idle_timeout_ns > 0) {
        if (now - t->last_activity >= opt_.idle_timeout_ns) {
          t->rec->error = ErrorClass::timeout;
          t->rec->error_detail = "no data for " + std::to_string(opt_.idle_timeout_ns / kNsPerMs) + " ms";
          fill_timings(t);
          finish(t, now);
          continue;
        }
        next = std::min(next, t->last_activity + opt_.idle_timeout_ns);
      }
    }
    next_scan_ = next;
  }

  void drain_done() {
    int left = 0;
    while (CURLMsg* m = curl_multi_info_read(multi_, &left)) {
      if (m->msg != CURLMSG_DONE) continue;
      Transfer* t = nullptr;
      curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &t);
      if (t != nullptr) on_done(t, m->data.result);
    }
  }

  void on_done(Transfer* t, CURLcode rc) {
    const Nanos now = clock_.now_ns();
    RequestRecord& rec = *t->rec;
    fill_timings(t);
    if (t->status == 0) curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->status);
    rec.http_status = static_cast<int>(t->status);

    if (t->status >= 300 && (rc == CURLE_OK || rc == CURLE_PARTIAL_FILE)) {
      classify_http_error(t);
      finish(t, now);
      return;
    }
    if (t->end_seen >= 0) {  // the protocol finished; how the body ended doesn't matter
      complete_ok(t, t->end_seen);
      return;
    }
    switch (rc) {
      case CURLE_OK:
        if (!opt_.protocol.stream) {
          decode_full_response(opt_.api, t->response, now, rec, opt_.counter, t->keep_text);
        } else {
          t->decoder->on_end(now, rec);
        }
        finish(t, now);
        return;
      case CURLE_PARTIAL_FILE:  // the body ended short of its framing
        if (opt_.protocol.stream) t->decoder->on_end(now, rec);
        if (rec.error == ErrorClass::none) rec.error = ErrorClass::truncated;
        set_detail(t, rc);
        break;
      case CURLE_OPERATION_TIMEDOUT:
        rec.error = t->connected ? ErrorClass::timeout : ErrorClass::connect;
        set_detail(t, rc);
        break;
      case CURLE_RECV_ERROR:
      case CURLE_SEND_ERROR:
      case CURLE_GOT_NOTHING:  // closed before any response
        rec.error = ErrorClass::reset;
        set_detail(t, rc);
        break;
      case CURLE_WRITE_ERROR:  // our write callback refused the body (oversized)
        rec.error = ErrorClass::bad_payload;
        set_detail(t, rc);
        break;
      default:
        // DNS, TCP connect, TLS handshake and certificate failures, bad URL: no usable
        // connection. Anything else after the connection was up counts as a reset.
        rec.error = t->connected ? ErrorClass::reset : ErrorClass::connect;
        set_detail(t, rc);
        break;
    }
    finish(t, now);
  }

  static void set_detail(Transfer* t, CURLcode rc) {
    // The error buffer names the host and the failure; it never contains headers.
    t->rec->error_detail = t->errbuf[0] != '\0' ? t->errbuf : curl_easy_strerror(rc);
  }

  void classify_http_error(Transfer* t) {
    RequestRecord& rec = *t->rec;
    const long s = t->status;
    std::string msg = error_message_from_body(t->response);
    if (s == 429) {
      rec.error = ErrorClass::rate_limited;
      rec.error_detail = "retry-after=" + (t->retry_after.empty() ? "-" : t->retry_after);
      if (!msg.empty()) rec.error_detail += "; " + msg;
      return;
    }
    rec.error = s >= 500 ? ErrorClass::http_5xx : ErrorClass::http_4xx;
    rec.error_detail = "HTTP " + std::to_string(s);
    if (s < 400) rec.error_detail += " (unexpected; redirects are not followed)";
    if (!msg.empty()) rec.error_detail += ": " + msg;
  }

  void fill_timings(Transfer* t) {
    curl_off_t dns = 0, conn = 0, app = 0, pre = 0, start = 0;
    long connects = 0;
    curl_easy_getinfo(t->easy, CURLINFO_NAMELOOKUP_TIME_T, &dns);
    curl_easy_getinfo(t->easy, CURLINFO_CONNECT_TIME_T, &conn);
    curl_easy_getinfo(t->easy, CURLINFO_APPCONNECT_TIME_T, &app);
    curl_easy_getinfo(t->easy, CURLINFO_PRETRANSFER_TIME_T, &pre);
    curl_easy_getinfo(t->easy, CURLINFO_STARTTRANSFER_TIME_T, &start);
    curl_easy_getinfo(t->easy, CURLINFO_NUM_CONNECTS, &connects);
    // curl's times are cumulative microseconds from the start of the transfer.
    NetTimings& n = t->rec->net;
    n.reused_connection = connects == 0;
    n.dns_ns = dns * kNsPerUs;
    n.connect_ns = conn > dns ? (conn - dns) * kNsPerUs : 0;
    n.tls_ns = app > conn ? (app - conn) * kNsPerUs : 0;
    n.first_byte_ns = start > pre ? (start - pre) * kNsPerUs : 0;
  }

  // The protocol's end marker was seen: the request succeeded whatever the HTTP body did.
  void complete_ok(Transfer* t, Nanos t_done) {
    if (t->rec->http_status == 0) t->rec->http_status = static_cast<int>(t->status);
    finish(t, t_done);
  }

  // Returns the record to the caller (via ready_) and retires the transfer. Removing an
  // unfinished transfer from the multi handle makes curl close its connection; a finished
  // one's connection goes back to the pool for reuse.
  void finish(Transfer* t, Nanos t_done) {
    RequestRecord& rec = *t->rec;
    rec.t_done = t_done;
    curl_multi_remove_handle(multi_, t->easy);
    give_back_easy(t->easy);
    active_.erase(t);
    ready_.push_back(&rec);
    delete t;
  }

  // --- curl callbacks (run inside curl_multi_socket_action) ----------------------------

  static int socket_cb(CURL*, curl_socket_t s, int what, void* userp, void* socketp) {
    auto* self = static_cast<HttpTarget*>(userp);
    epoll_event ev{};
    ev.data.fd = s;
    if (what == CURL_POLL_REMOVE) {
      epoll_ctl(self->epfd_, EPOLL_CTL_DEL, s, nullptr);
      curl_multi_assign(self->multi_, s, nullptr);
      return 0;
    }
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
    if (socketp == nullptr) {
      if (epoll_ctl(self->epfd_, EPOLL_CTL_ADD, s, &ev) != 0 && errno == EEXIST) {
        epoll_ctl(self->epfd_, EPOLL_CTL_MOD, s, &ev);
      }
      curl_multi_assign(self->multi_, s, self);  // any non-null marker: "registered"
    } else {
      epoll_ctl(self->epfd_, EPOLL_CTL_MOD, s, &ev);
    }
    return 0;
  }

  static int timer_cb(CURLM*, long timeout_ms, void* userp) {
    auto* self = static_cast<HttpTarget*>(userp);
    self->curl_due_ = timeout_ms < 0 ? -1 : self->clock_.now_ns() + timeout_ms * kNsPerMs;
    return 0;
  }

  static int prereq_cb(void* userp, char*, char*, int, int) {
    static_cast<Transfer*>(userp)->connected = true;
    return CURL_PREREQFUNC_OK;
  }

  static std::size_t header_cb(char* data, std::size_t size, std::size_t n, void* userp) {
    auto* t = static_cast<Transfer*>(userp);
    const std::size_t len = size * n;
    const std::string_view line(data, len);
    const Nanos now = t->target->clock_.now_ns();
    t->last_activity = now;
    if (line.starts_with("HTTP/")) {  // a status line: a new (maybe final) response
      t->headers_done = false;
      t->retry_after.clear();
    } else if (line == "\r\n" || line == "\n") {
      long status = 0;
      curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
      if (status >= 200) {  // 1xx interim responses are followed by the real one
        t->status = status;
        t->headers_done = true;
        t->rec->t_headers = now;
        t->rec->http_status = static_cast<int>(status);
      }
    } else if (http_detail::header_is(line, "retry-after")) {
      t->retry_after = http_detail::header_value(line);
    }
    return len;
  }

  static std::size_t write_cb(char* data, std::size_t size, std::size_t n, void* userp) {
    auto* t = static_cast<Transfer*>(userp);
    const std::size_t len = size * n;
    HttpTarget* self = t->target;
    const Nanos now = self->clock_.now_ns();
    t->last_activity = now;
    if (t->status >= 300 || !self->opt_.protocol.stream) {
      const std::size_t cap = t->status >= 300 ? kMaxErrorBody : kMaxFullBody;
      if (t->response.size() + len > cap) {
        if (t->status >= 300) return len;  // the message is in the first bytes
        return 0;  // not all bytes taken: curl fails the transfer with CURLE_WRITE_ERROR
      }
      t->response.append(data, len);
      return len;
    }
    if (t->end_seen >= 0) return len;  // trailing bytes after the end marker
    t->decoder->on_body(std::string_view(data, len), now, *t->rec);
    if (t->decoder->finished()) {
      t->end_seen = now;
      self->schedule_scan(now + kEndGraceNs);
    }
    return len;
  }

  HttpTargetOptions opt_;
  const Clock& clock_;
  std::string base_url_;
  int epfd_ = -1;
  int timerfd_ = -1;
  CURLM* multi_ = nullptr;
  curl_slist* headers_ = nullptr;
  std::unordered_set<Transfer*> active_;
  std::vector<RequestRecord*> ready_;  // finished, not yet returned by poll()
  std::vector<CURL*> spare_;           // easy handles for reuse
  Nanos curl_due_ = -1;                // curl's next timeout on clock_, -1 none
  Nanos next_scan_ = std::numeric_limits<Nanos>::max();
  Nanos armed_ = -1;                   // pending timerfd expiry; -1 when none
};

}  // namespace

std::unique_ptr<Target> make_http_target(const HttpTargetOptions& opt, const Clock& clock) {
  return std::make_unique<HttpTarget>(opt, clock);
}

}  // namespace inferscope
