/* models/models.h: the models layer, the public contract. Include this
 * one file to use the layer; each module's own header (included below)
 * details its part.
 *
 * What the layer is: the workloads and the arithmetic the simulator and
 * the command line share, without simulating anything.
 *   model.h          DNN workloads: model files (models/NAME.model, the
 *                    docs/models.md, "Model files") and the device table
 *                    (models/devices.conf) that times them: tensors in
 *                    backward order, per-layer forward and backward
 *                    seconds, the update's seconds
 *   memory.h         a GPU's memory in data-parallel training (model
 *                    states by ZeRO stage, a transformer's activations)
 *                    and the optimizer's update time
 *   model_catalog.h  every model file of the models directory at once
 *   model_import.h   model files from safetensors headers, Hugging Face
 *                    configs and parameter lists (json-glib)
 *   gradgen.h        synthetic gradients (GSL): deterministic per (seed,
 *                    worker, tensor, iteration), generated in chunks
 *   array_io.h       gradient vectors on disk: NumPy .npy and raw .f32
 *   grad_dump.h      a worker's synthetic gradient written to such a file
 *   units.h          "10Gbps", "5us", "64MiB" to numbers and back
 *   formula.h        the analytic timing models of the seed papers and of
 *                    the collectives, one registry entry each
 *   formula_input.h  a formula's inputs as text, and its evaluation over
 *                    a list of worker counts
 *   codec_cost.h     how long codec work takes on the CPU or the GPU
 *                    (models/codec_costs.conf), and the NIC engine's
 *                    parameters per codec
 *   nic.h            INCEPTIONN's NIC compression engine, cycle by cycle,
 *                    a generic streaming engine for the other codecs, and
 *                    the packets a message travels in
 *   codec_eval.h     what a codec does to gradients: payload size and
 *                    error, step by step
 *   server.h         a shared-pull parameter server's step: pushes
 *                    summed, momentum, the pull encoded once
 *   codec_bench.h    how fast the codecs run on this CPU, against memcpy,
 *                    and the CPU cost table fitted from it (its timing
 *                    helpers serve every measurement of the codecs)
 *
 * Layering: models/ uses codecs/ (codecs/codec.h), GLib, json-glib, GSL
 * and the C library, never SimGrid; nothing here knows of the simulation, the
 * experiment files or the command line, which use this layer. Nothing
 * prints, exits or keeps mutable state in statics: every function is
 * safe to call from any simulated actor of one process.
 *
 * Data files: model files and devices.conf are read from a models
 * directory: struct model_opts' dir, else $GRADSIM_MODELS_DIR, else the
 * source tree's models/ (model_dir()). codec_costs.conf is read from the
 * same directory unless a path is given.
 *
 * Units, unless a name says otherwise (_s, _bytes, _bps, ...): seconds,
 * bytes, bytes per second (not bits: units_bandwidth("10Gbps") is
 * 1.25e9), FLOPs per sample, samples per second; gradient values are
 * float32; a formula's parameters are in the units formula_param_unit()
 * names (alpha in seconds, beta and gamma in seconds per byte); the NIC
 * engine counts clock cycles of its own clock.
 *
 * Ownership: the caller owns what it passes in and every struct it
 * declares (the _init/_fini and caller-buffer functions fill memory the
 * caller provides). What a function returns through a pointer is the
 * caller's, freed as its header says: struct model with model_free();
 * struct codec_costs with codec_costs_free(); a model_catalog with
 * model_catalog_fini(); the vectors of array_read() and npy_encode()
 * with free(); the strings of model_list() and units_bytes_text() and
 * the list of formula_p_list_parse() with g_free(). model_free() and
 * codec_costs_free() take NULL. Registry entries (struct formula) are
 * static and const. On error nothing is returned (*OUT is NULL or
 * untouched) and nothing is left allocated.
 *
 * Errors: a function that can fail returns 0 (or a non-negative size)
 * or a negative errno value; where it takes an ERR buffer of ERRLEN
 * bytes it writes one line there: the file and line or the parameter,
 * the bad value, and what is allowed (for an unknown name, the valid
 * names). The values used:
 *   -EINVAL   bad input: a bad line of a data file, an unknown model,
 *             device or precision, a parameter out of range
 *             (codec_costs_load() reports a missing file so too)
 *   -ENOENT   a file, model or tensor name that does not exist
 *   -EBADMSG  a malformed .npy or .f32 file
 *   -EIO      a read or write that failed (grad_dump_write(): the
 *             system's errno when it gives one)
 *   -ENOMEM   allocation failed (GLib's own allocations abort instead)
 * The command line turns these into one message and exit status 2. */
#ifndef GRADSIM_MODELS_MODELS_H
#define GRADSIM_MODELS_MODELS_H

#include "array_io.h"
#include "codec_bench.h"
#include "server.h"
#include "codec_cost.h"
#include "codec_eval.h"
#include "formula.h"
#include "formula_input.h"
#include "grad_dump.h"
#include "gradgen.h"
#include "model.h"
#include "memory.h"
#include "model_catalog.h"
#include "model_import.h"
#include "nic.h"
#include "units.h"

#endif
