/* sim/comm_rate.h: a rate-limited asynchronous send (comm_rate.cpp). */
#ifndef GRADSIM_SIM_COMM_RATE_H
#define GRADSIM_SIM_COMM_RATE_H

#include <simgrid/forward.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* sg_mailbox_put_async with the transfer's rate bounded by RATE_BPS bytes
 * per second (<= 0: no bound). Wait on the result with sg_comm_wait; or,
 * with DETACH_CLEAN, the send is detached (the sender goes on at once, the
 * transfer happens when the receiver takes it; DETACH_CLEAN frees the
 * payload if it never does) and NULL is returned. */
sg_comm_t sim_put_async_rate(sg_mailbox_t mailbox, void *payload, long bytes,
                             double rate_Bps, void (*detach_clean)(void *));

/* sg_comm_wait_any_for that keeps every handle when it times out
 * (returns -1 then); the comm that completed is released, as by
 * sg_comm_wait_any. */
ssize_t sim_wait_any_for(sg_comm_t *comms, size_t count, double timeout);

#ifdef __cplusplus
}
#endif
#endif
