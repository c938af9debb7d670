/* sim/names.c: the names of the engine's enums (engine.h); the one place
 * a key's values are spelled, for the experiment files that give them and
 * the result files that print them. */
#include "engine.h"

const char *const fabric_names[FABRIC_COUNT] = {
    [FABRIC_RAIL] = "rail",
    [FABRIC_FAT_TREE] = "fat-tree",
};

const char *const payload_names[PAYLOAD_COUNT] = {
    [PAYLOAD_FULL] = "full",
    [PAYLOAD_SAMPLED] = "sampled",
    [PAYLOAD_NONE] = "none",
};

/* The training schedules' names (schedule_of() in sim/schedules/). */
const char *const mode_names[MODE_COUNT] = {
    [MODE_SYNC] = "sync",
    [MODE_OVERLAP] = "overlap",
    [MODE_PIPE] = "pipe",
};

const char *const placement_names[PLACE_COUNT] = {
    [PLACE_CPU] = "cpu",
    [PLACE_GPU] = "gpu",
    [PLACE_NIC] = "nic",
};
