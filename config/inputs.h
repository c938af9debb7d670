/* config/inputs.h: what a point's results depend on besides its keys. */
#ifndef GRADSIM_INPUTS_H
#define GRADSIM_INPUTS_H

#include "experiment.h"

/* Append to every point's configuration an [inputs] section: the gradsim
 * build (the version and tools/build_id.sh's id of the sources; outside a
 * git checkout, "not a git checkout") and
 * a digest of each file the point reads (the models directory: model
 * files, devices.conf, the shipped cost tables; a model, cost table or
 * platform given by path), and recompute the point's hash from it. A
 * finished point kept in DIR/points/ is then reused only by the same
 * build on the same inputs; editing a model file or upgrading gradsim
 * runs the point again. Never fails: an unreadable file is recorded as
 * such (reading it fails later, with its own message). */
void experiment_seal_inputs(struct experiment *e);

/* The gradsim build, as recorded in [inputs] gradsim. */
const char *gradsim_build(void);

#endif
