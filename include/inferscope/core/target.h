#pragma once
// The system under test, as the load generator sees it. Implemented by the HTTP client
// (a real engine or the sim server over loopback) and by the in-process simulator
// (virtual time). The load generator never knows which one it drives.
//
// Threading: every method is called from one thread (the load loop). Completions are
// returned from poll() on that same thread.
#include <cstddef>
#include <vector>

#include "inferscope/core/clock.h"
#include "inferscope/core/request.h"
#include "inferscope/core/timeline.h"

namespace inferscope {

class Target {
 public:
  virtual ~Target() = default;

  // The clock every timestamp in the records is taken from.
  virtual const Clock& clock() const = 0;

  // Starts a request. `rec` is owned by the caller and must stay valid and unmoved until
  // it is returned by poll(). The caller has filled rec.id, rec.t_sched and the request
  // labels; the target fills t_send and everything after. Never blocks on the network.
  virtual void submit(const GenRequest& req, RequestRecord& rec) = 0;

  // Drives I/O (or simulated events) until `deadline_ns` on clock() or until at least one
  // request finishes, whichever is first, and appends finished records to `finished`.
  // A virtual-time target advances its clock to the next event, at most to the deadline.
  virtual void poll(Nanos deadline_ns, std::vector<RequestRecord*>& finished) = 0;

  // Requests submitted and not yet returned by poll().
  virtual std::size_t in_flight() const = 0;

  // Aborts every in-flight request; each is returned by the next poll() with
  // ErrorClass::cancelled (or its real outcome if it had already finished).
  virtual void cancel_all() = 0;
};

}  // namespace inferscope
