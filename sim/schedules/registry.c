/* sim/schedules/registry.c: the one list of training schedules, by the
 * [training] mode that names them. */
#include "../sim.h"

extern const struct schedule schedule_sync, schedule_overlap, schedule_pipe;

const struct schedule *schedule_of(enum mode mode) {
  switch (mode) {
  case MODE_SYNC:
    return &schedule_sync;
  case MODE_OVERLAP:
    return &schedule_overlap;
  case MODE_PIPE:
    return &schedule_pipe;
  case MODE_COUNT:
    break;
  }
  return NULL;
}
