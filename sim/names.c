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

/* NCCL_ALGO's and NCCL_PROTO's spellings, lower case (NCCL compares them
 * without case), then "auto". */
const char *const nccl_algo_names[NCCL_ALGO_COUNT + 1] = {
    [NCCL_ALGO_TREE] = "tree",
    [NCCL_ALGO_RING] = "ring",
    [NCCL_ALGO_COLLNET_DIRECT] = "collnet-direct",
    [NCCL_ALGO_COLLNET_CHAIN] = "collnet-chain",
    [NCCL_ALGO_NVLS] = "nvls",
    [NCCL_ALGO_NVLS_TREE] = "nvls-tree",
    [NCCL_ALGO_AUTO] = "auto",
};

const char *const nccl_proto_names[NCCL_PROTO_COUNT + 1] = {
    [NCCL_PROTO_LL] = "ll",
    [NCCL_PROTO_LL128] = "ll128",
    [NCCL_PROTO_SIMPLE] = "simple",
    [NCCL_PROTO_AUTO] = "auto",
};

const char *const nccl_version_names[NCCL_VERSION_COUNT] = {
    [NCCL_V2_30] = "2.30", [NCCL_V2_18] = "2.18", [NCCL_V2_20] = "2.20",
    [NCCL_V2_26] = "2.26", [NCCL_V2_28] = "2.28",
};

const char *const nccl_tuner_names[NCCL_TUNER_COUNT] = {
    [NCCL_TUNER_INTERNAL] = "nccl",
    [NCCL_TUNER_AWS_P5] = "aws-p5",
};

const char *const compression_names[COMPRESS_COUNT] = {
    [COMPRESS_PER_HOP] = "per-hop",
    [COMPRESS_PER_BUCKET] = "per-bucket",
};

const char *const sharding_names[SHARD_COUNT] = {
    [SHARD_NONE] = "none",
    [SHARD_ZERO1] = "zero1",
    [SHARD_ZERO2] = "zero2",
    [SHARD_ZERO3] = "zero3",
    [SHARD_HSDP] = "hsdp",
};

const char *const shard_codec_names[SHARD_CODEC_COUNT] = {
    [SHARD_CODEC_ALL] = "all",
    [SHARD_CODEC_WEIGHTS] = "weights",
    [SHARD_CODEC_GRADIENTS] = "gradients",
};

const char *const implementation_names[IMPL_COUNT] = {
    [IMPL_GRADSIM] = "gradsim",
    [IMPL_PYTORCH] = "pytorch",
    [IMPL_FUSED] = "fused",
};
