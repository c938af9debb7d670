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
