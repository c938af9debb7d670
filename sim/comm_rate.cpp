// sim/comm_rate.cpp: the one piece of SimGrid's C++ API gradsim needs
// that 3.32's C API lacks: a send with a maximal rate (Comm::set_rate),
// waited on or detached. The NIC engine and the host driver limit how fast
// a message can leave (models/nic.h); SimGrid then shares the links among
// the flows with that bound, as a real rate-limited sender leaves
// bandwidth to others.
#include "comm_rate.h"

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Mailbox.hpp>

sg_comm_t sim_put_async_rate(sg_mailbox_t mailbox, void *payload,
                             long bytes, double rate_Bps,
                             void (*detach_clean)(void *)) {
  simgrid::s4u::CommPtr comm = mailbox->put_init(payload, bytes);
  if (rate_Bps > 0)
    comm->set_rate(rate_Bps);
  if (detach_clean) {
    comm->detach(detach_clean);
    return nullptr;
  }
  // As sg_mailbox_put_async, which hands the C caller one reference that
  // sg_comm_wait releases.
  comm->start();
  comm->add_ref();
  return comm.get();
}

// sg_comm_wait_any_for releases every handle when it times out (3.32:
// src/s4u/s4u_Comm.cpp, its CommPtr vector holds the C caller's
// references), so that a timer cannot be waited on beside comms that are
// still wanted. Here the C caller's references survive a timeout; the
// comm that completed is released, as sg_comm_wait_any releases it.
ssize_t sim_wait_any_for(sg_comm_t *comms, size_t count, double timeout) {
  std::vector<simgrid::s4u::CommPtr> v;
  v.reserve(count);
  for (size_t i = 0; i < count; i++)
    v.emplace_back(comms[i]); // adds a reference of its own
  ssize_t pos = simgrid::s4u::Comm::wait_any_for(v, timeout);
  if (pos >= 0)
    comms[pos]->unref(); // the C caller's, as sg_comm_wait_any
  return pos;
}

