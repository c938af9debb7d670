#!/usr/bin/env python3
"""tools/fit_gpu_costs.py: the fitted constants of the GPU codec model
(models/codec_cost.h) from published kernel timings, printed as the lines of
models/codec_costs.conf they set.

    python3 tools/fit_gpu_costs.py [models/devices.conf]

The model: a call takes kernels x launch_s + bytes / (e_mem x memory_Bps)
+ flops / (e_flops x fp32_flops), with launch_s, memory_Bps and fp32_flops
the device's (devices.conf). Three things are fitted, each to one published
timing of one kernel (never to an end-to-end speed-up); the other timings
of the same sources are checks (tests/test_codec_cost.c):

1. gpu_memory_efficiency, the fraction of the memory bandwidth a streaming
   kernel reaches: Espresso's profiled FP16 cast on a V100, 26 us for the
   compression and decompression of a shard of 2^20 values
   (zhuangwang93/Espresso a0294e3a, byteps/torch/mergeComp/scheduler/
   model_tensor.py: fp16 overhead [0][1] = 26 us, constant up to 2^20
   values, simulator_espresso.py get_compression_overhead). A cast each
   way: two kernels, 4 bytes read and 2 written per value, and back.
2. gpu_radix_select, torch.topk's radix selection: torch 2.6 on an H20,
   one row of fp32, k = 100 (pytorch/pytorch PR #164459's table): 0.135 ms
   at n = 10^6 and 36.6 ms at n = 10^9 give its launches and its compute
   per value and pass (the 10^8 row, 3.56 ms, is the check). Passes: 4,
   the 32-bit key in 8-bit digits (aten/src/ATen/native/cuda/TensorTopK.cu,
   mbtopk: RADIX_BITS = 8, one radixFindKthValues pass per digit), each
   reading the 4-byte values; the output is k values and k int64 indices.
3. gpu_orth pytorch qr_kernels, torch.linalg.qr of a rows x r factor in
   launch-equivalents: the median of torch.qr's times at r = 4 and 8 in
   pytorch/pytorch PR #76673 (rows 256 to 4096; the GPU is not named:
   Volta or later, whose launch figure is the same), 109.5 to 118.1 us.

e_flops (gpu_flops_efficiency) is not fitted: it stays 1, so that the
selection's compute is in operations at the fp32 peak.
"""
import os
import statistics
import sys


def devices(path):
    """NAME -> {memory, fp32, launch} from devices.conf."""
    out, cur = {}, None
    with open(path) as f:
        for line in f:
            w = line.split('#', 1)[0].split()
            if not w:
                continue
            if w[0] == 'device':
                cur = out.setdefault(w[1], {})
            elif w[0] == 'memory':
                cur['memory'] = float(w[1])
            elif w[0] == 'launch':
                cur['launch'] = float(w[1])
            elif w[0] == 'peak' and w[1] == 'fp32':
                cur['fp32'] = float(w[2])
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        here, '..', 'models', 'devices.conf')
    d = devices(path)
    v100, h20 = d['V100'], d['H20']
    e_flops = 1.0

    # 1. Espresso's FP16 cast, both ways, 2^20 values, V100.
    n, t = 2 ** 20, 26e-6
    e_mem = 12 * n / (v100['memory'] * (t - 2 * v100['launch']))
    print(f'gpu_memory_efficiency {e_mem:.4g} '
          f'"fitted: Espresso FP16 cast, 2^20 values, V100: 26 us"')

    # 2. torch.topk, torch 2.6, H20, k = 100: T(n) = K L + a n + out,
    #    a = passes (4 bytes / (e_mem B) + c / (e_flops F)).
    passes, k = 4, 100
    bw = e_mem * h20['memory']
    out = 12 * k / bw
    (n1, t1), (n2, t2) = (1e6, 0.135e-3), (1e9, 36.6e-3)
    a = (t2 - t1) / (n2 - n1)
    kernels = (t1 - out - a * n1) / h20['launch']
    c = (a / passes - 4 / bw) * e_flops * h20['fp32']
    print(f'gpu_radix_select kernels={kernels:.4g} passes={passes} bytes=4 '
          f'flops={c:.4g} '
          f'"fitted: torch.topk, torch 2.6, H20, k = 100: 0.135 ms at 1e6, '
          f'36.6 ms at 1e9"')
    t3 = kernels * h20['launch'] + a * 1e8 + out
    print(f'# check: 1e8 values: {t3 * 1e3:.3f} ms (published 3.56 ms, '
          f'{100 * (t3 / 3.56e-3 - 1):+.1f}%)')

    # 3. torch.qr at r = 4 and 8, PR #76673.
    qr_us = [111.8, 109.7, 109.5, 117.3, 116.1,   # r = 4, rows 256..4096
             110.8, 116.3, 118.1]                 # r = 8, rows 256..1024
    med = statistics.median(qr_us) * 1e-6
    print(f'gpu_orth pytorch ... qr_kernels={med / v100["launch"]:.4g} '
          f'"fitted: torch.qr, r = 4 and 8, PR #76673: median '
          f'{med * 1e6:.1f} us"')


if __name__ == '__main__':
    main()
