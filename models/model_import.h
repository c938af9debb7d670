/* models/model_import.h: a model file (models/<name>.model,
 * docs/models.md, "Model files") from what users already have: a
 * safetensors checkpoint's header, a Hugging Face config.json of a
 * transformer family, or a plain list of parameters (NAME SHAPE DTYPE a
 * line, as PyTorch's named_parameters() prints them).
 *
 * The three routes produce a list of parameter tensors (name, shape,
 * dtype), and one function turns any list into the model file: tensors in
 * the order backward produces their gradients (the family's execution
 * order, reversed), grouped into layers by module (a tensor's name less
 * its last component), each layer's forward FLOPs per sample at the
 * sequence length (Narayanan et al., SC 2021, Section 5.1: a matrix
 * product of an m x n weight costs 2 m n per token; attention's two
 * products, QK^T and AV, 4 s^2 d per sample of s tokens with d the query
 * width), so that the same model gives the same file by any route.
 *
 * Errors: -EINVAL (bad input) or -EIO (a file that cannot be read), with
 * one message in ERR naming the file, the field and what is allowed. */
#ifndef GRADSIM_MODELS_MODEL_IMPORT_H
#define GRADSIM_MODELS_MODEL_IMPORT_H

#include "model.h"

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest safetensors header read (the format's own limit is 100 MB). */
#define IMPORT_HEADER_MAX ((uint64_t)100 << 20)
/* The most transformer blocks a config may ask for (the largest models
 * published have a few hundred). */
#define IMPORT_MAX_LAYERS 10000

/* One parameter tensor. DTYPE is gradsim's name: fp32, fp16, bf16, fp64,
 * fp8_e4m3, fp8_e5m2. */
struct import_tensor {
  char *name;
  size_t ndims;
  uint64_t dims[MODEL_MAX_DIMS];
  char dtype[12];
};

/* What a config says beyond its tensors, or what the user gives. */
struct import_info {
  char *name;          /* the model's name */
  char *family;        /* gpt2, bert, llama (mistral), or "" */
  char *source;        /* one line: where the tensors came from */
  uint64_t seq_len;    /* tokens per sample; 0: from the tensors (GPT-2's
                        * position table) or 2048 */
  int batch;           /* samples per device and iteration (default 8) */
  bool tied_head;      /* a language-model head sharing the embedding */
  uint64_t vocab;      /* its width, when tied */
  uint64_t d_model;    /* likewise */
  /* What a config knows that the tensors do not (0: not known): the
   * attention's query width (heads x head_dim, where a fused projection
   * holds query, key and value of other widths: Phi-3); a mixture of
   * experts' experts and those a token uses (Mixtral: 8 and 2; an
   * expert's FLOPs count ACTIVE / EXPERTS of its products); a sliding
   * window of attention, in tokens, on every block or (WINDOW_EVEN) on
   * the even ones only (Gemma 2). */
  uint64_t query_width;
  int experts, experts_active;
  uint64_t window;
  bool window_even;
};

void import_info_clear(struct import_info *info);

/* The tensors of one or more safetensors files (PATHS, K of them: the
 * shards of one checkpoint): only the header of each is read (8-byte
 * little-endian length, then a JSON object of names to dtype, shape and
 * offsets; "__metadata__" skipped), so a file cut after its header is
 * enough. Appends struct import_tensor * to OUT (free with
 * import_tensor_free); integer and boolean tensors (buffers, not
 * parameters) are left out and counted in *SKIPPED. */
int import_safetensors(const char *const *paths, size_t k, GPtrArray *out,
                       size_t *skipped, char *err, size_t errlen);

/* The tensors of a Hugging Face config.json (model_type gpt2, bert,
 * llama, mistral, qwen2, gemma, gemma2, phi3 or mixtral), as the family's
 * checkpoints name and shape them, and INFO (family, tied head, the
 * context length as seq_len, and what the struct says a config knows). */
int import_config(const char *path, GPtrArray *out, struct import_info *info,
                  char *err, size_t errlen);

/* The tensors of a plain list: one 'NAME SHAPE DTYPE' a line (SHAPE
 * 768x2304 or 1 for a scalar; DTYPE float32, bfloat16, float16, float64
 * or gradsim's fp32, bf16, fp16, fp64), '#' comments and blank lines
 * skipped. */
int import_list(const char *path, GPtrArray *out, char *err, size_t errlen);

/* The same three from LEN bytes at DATA (a whole safetensors file or its
 * first bytes, a config's or a list's text), NAME standing for the file in
 * messages: what the fuzz harness (tests/fuzz/fuzz_import.c) calls. */
int import_safetensors_data(const char *name, const void *data, size_t len,
                            GPtrArray *out, size_t *skipped, char *err,
                            size_t errlen);
int import_config_data(const char *name, const char *text, size_t len,
                       GPtrArray *out, struct import_info *info, char *err,
                       size_t errlen);
int import_list_data(const char *name, const char *text, size_t len,
                     GPtrArray *out, char *err, size_t errlen);

void import_tensor_free(gpointer t);

/* The model file text of the tensors IN (any order), with INFO: the
 * family is recognised from the names when INFO's is empty. Returns the
 * text (g_free) or NULL with *ERR. */
char *import_model_text(const GPtrArray *in, struct import_info *info,
                        char *err, size_t errlen);

#endif
