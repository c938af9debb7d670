#!/usr/bin/env python3
"""Generate the DNN workload files models/<name>.model for gradsim.

Each architecture is a short function below that builds the network layer by
layer in forward order, tracking the activation shape, so that every layer's
forward FLOPs per sample and every gradient tensor's element count are
computed, not copied.  The file format is described in the README ("Model
files") and read by models/model.c.

Counting conventions (FLOPs of the forward pass for ONE sample, a multiply
and an add counted separately, i.e. 2 x MACs):
  conv       2*Cin/groups*kh*kw*Cout*Hout*Wout (+ Cout*Hout*Wout with bias)
  fc         2*in*out (+ out with bias)
  batchnorm  4 per element        relu, dropout, residual add  1 per element
  maxpool, avgpool  k*k per output element
  softmax (with the loss)  3 per element           embedding  0
  LSTM layer, per token (H hidden, In input, PyTorch/cuDNN gates i,f,g,o with
    the two bias vectors b_ih and b_hh):
      8*H*(In+H)   the four gate matrix products W_ih x + W_hh h
    +  8*H         adding b_ih and b_hh to the 4H gate pre-activations
    +  5*H         3 sigmoids (i, f, o) and 2 tanh (g, and tanh(c)), 1 each
    +  4*H         c = f*c + i*g (3 per element), h = o*tanh(c) (1)
    = 8*H*(In+H) + 17*H, times the sequence length.
Gradient tensors are written in backward order: layers last to first and,
inside a layer, bias before weight (batchnorm: beta = "bias" before
gamma = "weight"; LSTM: bias_hh, bias_ih, weight_hh, weight_ih).

Usage:
  tools/gen_models.py            write models/*.model (deterministic)
  tools/gen_models.py --check    print the check table against the papers'
                                 numbers and verify the files on disk are
                                 what this script generates
Standard library only.
"""

import argparse
import os
import sys
import textwrap

# The seed papers, ../shared/seeds/<file> (see ../shared/seeds/README.md).
SEED_FILES = [
    ("seeds/000", "000_22a5e74f200bf7cc.txt", "INCEPTIONN, MICRO 2018"),
    ("seeds/001", "001_dbab54fde83aa476.txt", "Pipe-SGD, NeurIPS 2018"),
    ("seeds/002", "002_7be351a6aef4cc56.txt", "RedSync, 2019"),
    ("seeds/003", "003_1c3a1fed9f66ebe2.txt",
     "GradientFlow, ImageNet/AlexNet training in 1.5 minutes"),
    ("seeds/004", "004_6e378edf789e7d56.txt", "3LC, 2018"),
]
INC = "INCEPTIONN (seeds/000)"
PIPE = "Pipe-SGD (seeds/001)"
REDSYNC = "RedSync (seeds/002)"
GFLOW = "GradientFlow (seeds/003)"
TLC = "3LC (seeds/004)"


class Net:
    """A network under construction: layers in forward order, each with its
    FLOPs, its MACs in weight products (for the MAC/FLOP comparison only)
    and its gradient tensors in the order backward writes them."""

    def __init__(self, name, dataset, input_desc, batch):
        self.name = name
        self.dataset = dataset
        self.input_desc = input_desc
        self.batch = batch
        self.notes = []       # header comment lines
        self.sources = []     # 'source' directives
        self.expects = []     # (kind, args...) directives
        self.layers = []      # dicts: name, kind, flops, macs, tensors, note
        self.backward_from = None
        self.shape = None     # (C, H, W) or (N,) for vectors
        self.func = name.replace("-", "_")  # the function that builds it

    # -- bookkeeping ------------------------------------------------------
    def layer(self, name, kind, flops, macs=0, tensors=(), note=""):
        assert all(l["name"] != name for l in self.layers), name
        self.layers.append({"name": name, "kind": kind, "flops": int(flops),
                            "macs": int(macs), "tensors": list(tensors),
                            "note": note})

    def elements(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def shape_str(self):
        return "x".join(str(d) for d in self.shape)

    # -- layers that keep the shape --------------------------------------
    def bn(self, name):
        c = self.shape[0]
        self.layer(name, "bn", 4 * self.elements(), 0,
                   [(name + ".bias", c, (c,)), (name + ".weight", c, (c,))],
                   self.shape_str())

    def relu(self, name):
        self.layer(name, "relu", self.elements(), note=self.shape_str())

    def dropout(self, name):
        self.layer(name, "dropout", self.elements(), note=self.shape_str())

    def add(self, name):
        self.layer(name, "add", self.elements(), note=self.shape_str())

    def loss(self, name="loss"):
        self.layer(name, "softmax", 3 * self.elements(),
                   note="with cross-entropy, over " + self.shape_str())

    # -- layers that change the shape ------------------------------------
    def conv(self, name, cout, k, stride=1, pad=0, groups=1, bias=True):
        cin, h, w = self.shape
        ho = (h + 2 * pad - k) // stride + 1
        wo = (w + 2 * pad - k) // stride + 1
        macs = cin // groups * k * k * cout * ho * wo
        flops = 2 * macs + (cout * ho * wo if bias else 0)
        tensors = [(name + ".bias", cout, (cout,))] if bias else []
        tensors.append((name + ".weight", cin // groups * k * k * cout,
                        (cout, cin // groups, k, k)))
        self.shape = (cout, ho, wo)
        desc = "%dx%d/%d%s%s -> %s" % (
            k, k, stride, " pad %d" % pad if pad else "",
            " groups %d" % groups if groups > 1 else "", self.shape_str())
        self.layer(name, "conv", flops, macs, tensors, desc)

    def pool(self, name, kind, k, stride, pad=0, ceil=False):
        c, h, w = self.shape
        if ceil:   # Caffe / TensorFlow 'SAME' style
            ho = -(-(h + 2 * pad - k) // stride) + 1
            wo = -(-(w + 2 * pad - k) // stride) + 1
        else:      # PyTorch default
            ho = (h + 2 * pad - k) // stride + 1
            wo = (w + 2 * pad - k) // stride + 1
        self.shape = (c, ho, wo)
        self.layer(name, kind, k * k * self.elements(),
                   note="%dx%d/%d -> %s" % (k, k, stride, self.shape_str()))

    def maxpool(self, name, k, stride, pad=0, ceil=False):
        self.pool(name, "maxpool", k, stride, pad, ceil)

    def avgpool(self, name, k, stride):
        self.pool(name, "avgpool", k, stride)

    def fc(self, name, out, bias=True):
        n = self.elements()          # flattens whatever comes in
        self.shape = (out,)
        tensors = [(name + ".bias", out, (out,))] if bias else []
        tensors.append((name + ".weight", n * out, (out, n)))
        self.layer(name, "fc", 2 * n * out + (out if bias else 0), n * out,
                   tensors, "%d -> %d" % (n, out))

    # -- totals -------------------------------------------------------------
    def tensors_backward(self):
        out = []
        for l in reversed(self.layers):
            for tname, n, shape in l["tensors"]:
                prod = 1
                for d in shape:
                    prod *= d
                assert prod == n, (tname, n, shape)
                out.append((tname, n, l["name"], shape))
        return out

    def params(self):
        return sum(t[1] for t in self.tensors_backward())

    def flops(self):
        return sum(l["flops"] for l in self.layers)

    def macs(self):
        return sum(l["macs"] for l in self.layers)

    def backward_range(self):
        """Indices of the layers that do backward work."""
        first = 0
        if self.backward_from:
            first = [l["name"] for l in self.layers].index(self.backward_from)
        return range(first, len(self.layers))

    # -- output ---------------------------------------------------------------
    def render(self):
        used = [(k, f, t) for k, f, t in SEED_FILES
                if any(k in x for x in self.notes + self.sources)]
        paras = ["%s.model: generated by tools/gen_models.py from its "
                 "function %s(); do not edit, rerun the script."
                 % (self.name, self.func),
                 "FLOPs are per sample and count a multiply and an add "
                 "separately (2 x MACs); the conventions are in the "
                 "script's docstring.",
                 "Seeds cited: " + ("; ".join(
                     "%s = ../shared/seeds/%s (%s)" % u for u in used)
                     or "none") + "."]
        # Notes: lines joined into paragraphs, "" separates paragraphs.
        cur = []
        for line in self.notes + [""]:
            if line:
                cur.append(line)
            elif cur:
                paras.append(" ".join(cur))
                cur = []
        paras.append("Totals: %d parameters (%.2f MB = %.2f MiB in fp32), "
                     "%d gradient tensors, %d layers, %.4g GFLOPs forward "
                     "per sample (%.4g GMACs in the conv/fc/LSTM products)."
                     % (self.params(), self.params() * 4 / 1e6,
                        self.params() * 4 / 2**20,
                        len(self.tensors_backward()), len(self.layers),
                        self.flops() / 1e9, self.macs() / 1e9))
        o = []
        for para in paras:
            if o:
                o.append("#")
            o += ["# " + x for x in textwrap.wrap(para, 76,
                                                  break_long_words=False,
                                                  break_on_hyphens=False)]
        o.append("")
        o.append("model %s" % self.name)
        o += ['source "%s"' % s for s in self.sources]
        o.append("dataset %s" % self.dataset)
        o.append('input "%s"' % self.input_desc)
        o.append("batch %d" % self.batch)
        if self.backward_from:
            o.append("backward_from %s" % self.backward_from)
        o.append("")
        o.append("# layers in forward order: name, forward FLOPs per sample")
        width = max(len(l["name"]) for l in self.layers)
        for l in self.layers:
            line = "layer %-*s %12d" % (width, l["name"], l["flops"])
            o.append(line + ("  # %s %s" % (l["kind"], l["note"])).rstrip())
        o.append("")
        o.append("# gradient tensors in backward order (bias before weight "
                 "inside a layer): name, elements, layer, shape (PyTorch's)")
        tb = self.tensors_backward()
        width = max(len(t[0]) for t in tb)
        lwidth = max(len(t[2]) for t in tb)
        nwidth = max(len(str(t[1])) for t in tb)
        for tname, n, lname, shape in tb:
            o.append("tensor %-*s %*d %-*s %s"
                     % (width, tname, nwidth, n, lwidth, lname,
                        "x".join(str(d) for d in shape)))
        o.append("")
        for e in self.expects:
            if e[0] == "params":
                o.append('expect params %s %s "%s"' % (e[1], e[2], e[3]))
            else:
                o.append('expect tensors %d "%s"' % (e[1], e[2]))
        for s in self.sources + [x[-1] for x in self.expects]:
            assert '"' not in s, s
        return "\n".join(o) + "\n"


# ---- ImageNet CNNs ---------------------------------------------------------

def alexnet():
    n = Net("alexnet", "imagenet", "3x227x227", 128)
    n.notes = [
        "AlexNet with batch normalization as trained by GradientFlow",
        "(seeds/003, Sec. 2.3.1 and Fig. 5: '27 layers with 60.9M",
        "learnable parameters managed by 26 tensors'; the backward pass",
        "'generates 26 gradient tensors'; it uses the AlexNet of its ref. [18],",
        "Jia et al. 2018, 'with proper batch normalization layers').",
        "",
        "Geometry: Caffe's single-tower bvlc_alexnet (conv1 96 11x11/4 on",
        "3x227x227, conv2 256 5x5 pad 2 groups 2, conv3 384 3x3, conv4 384 3x3",
        "groups 2, conv5 256 3x3 groups 2, maxpool 3x3/2, fc6 9216->4096,",
        "fc7 4096->4096, fc8 4096->1000, dropout after relu6 and relu7), its",
        "two LRN layers replaced by a BN (gamma, beta) after every conv, placed",
        "conv -> bn -> relu. Convs keep their biases: 5 conv (w, b) + 5 BN (2)",
        "+ 3 fc (w, b) = 26 tensors, as GradientFlow states.",
        "",
        "Layer count: 26 here (with the softmax/loss layer); GradientFlow says",
        "27, probably counting the data layer; the difference holds no FLOPs.",
        "",
        "Size: INCEPTIONN (seeds/000, Sec. VII-A) says 233 MB, RedSync",
        "(seeds/002, Table 1) 233 MB and 0.72 GFlops: both are MiB of",
        "fp32 (232.6 MiB here); 0.72 is GMACs, not FLOPs.",
        "",
        "Batch 128: GradientFlow's per-GPU batch for AlexNet (Figs. 1, 6).",
    ]
    n.sources = [GFLOW + " Sec. 2.3.1, Fig. 5: AlexNet-BN, 27 layers, 60.9M "
                 "parameters, 26 gradient tensors, per-GPU batch 128",
                 "Caffe bvlc_alexnet geometry (Krizhevsky et al. 2012), LRN "
                 "replaced by BN after each conv",
                 INC + " Sec. VII-A: 233 MB; " + REDSYNC + " Table 1: 233 MB"]
    n.shape = (3, 227, 227)
    n.conv("conv1", 96, 11, stride=4)
    n.bn("bn1"); n.relu("relu1"); n.maxpool("pool1", 3, 2)
    n.conv("conv2", 256, 5, pad=2, groups=2)
    n.bn("bn2"); n.relu("relu2"); n.maxpool("pool2", 3, 2)
    n.conv("conv3", 384, 3, pad=1)
    n.bn("bn3"); n.relu("relu3")
    n.conv("conv4", 384, 3, pad=1, groups=2)
    n.bn("bn4"); n.relu("relu4")
    n.conv("conv5", 256, 3, pad=1, groups=2)
    n.bn("bn5"); n.relu("relu5"); n.maxpool("pool5", 3, 2)
    n.fc("fc6", 4096); n.relu("relu6"); n.dropout("drop6")
    n.fc("fc7", 4096); n.relu("relu7"); n.dropout("drop7")
    n.fc("fc8", 1000)
    n.loss()
    n.expects = [("params", "60.9e6", "0.005",
                  GFLOW + " Sec. 2.3.1 and Fig. 5: 60.9M"),
                 ("tensors", 26, GFLOW + " Sec. 2.3.1 and Fig. 5: 26 tensors")]
    return n


def vgg16():
    n = Net("vgg16", "imagenet", "3x224x224", 32)
    n.notes = [
        "VGG-16 for ImageNet (Simonyan and Zisserman 2015, configuration D;",
        "torchvision vgg16 without BN): 13 conv 3x3 pad 1 with bias, 5 maxpools",
        "2x2/2, fc 25088->4096->4096->1000 with relu and dropout.",
        "138,357,544 parameters, 32 gradient tensors.",
        "",
        "Size: INCEPTIONN (seeds/000, Sec. I and VII-A) says 525 MB, RedSync",
        "(seeds/002, Table 1) 528 MB and 15.5 GFlops: 528 is MiB of fp32",
        "(527.8 MiB here; 525 is 0.5% below it); 15.5 is GMACs, not FLOPs.",
        "",
        "Batch 32: RedSync's per-node ImageNet batch (Sec. 3.2).",
    ]
    n.sources = ["Simonyan and Zisserman 2015, VGG-16 (configuration D)",
                 REDSYNC + " Table 1: 528 MB, 15.5 GFlops; ImageNet batch 32 "
                 "per node",
                 INC + " Sec. VII-A: 525 MB"]
    n.shape = (3, 224, 224)
    cfg = [[64, 64], [128, 128], [256, 256, 256], [512, 512, 512],
           [512, 512, 512]]
    for s, widths in enumerate(cfg, 1):
        for i, c in enumerate(widths, 1):
            n.conv("conv%d_%d" % (s, i), c, 3, pad=1)
            n.relu("relu%d_%d" % (s, i))
        n.maxpool("pool%d" % s, 2, 2)
    n.fc("fc6", 4096); n.relu("relu6"); n.dropout("drop6")
    n.fc("fc7", 4096); n.relu("relu7"); n.dropout("drop7")
    n.fc("fc8", 1000)
    n.loss()
    n.expects = [("params", "138.36e6", "0.01",
                  "Simonyan and Zisserman 2015: 138M; " + REDSYNC +
                  " Table 1: 528 MB and " + INC + ": 525 MB, MiB of fp32")]
    return n


def bottleneck(n, p, planes, stride, project, shortcut_bn):
    """ResNet v1 bottleneck (torchvision: the stride on the 3x3 conv)."""
    x = n.shape
    n.conv(p + ".conv1", planes, 1, bias=False)
    n.bn(p + ".bn1"); n.relu(p + ".relu1")
    n.conv(p + ".conv2", planes, 3, stride=stride, pad=1, bias=False)
    n.bn(p + ".bn2"); n.relu(p + ".relu2")
    n.conv(p + ".conv3", planes * 4, 1, bias=False)
    n.bn(p + ".bn3")
    if project:
        out, n.shape = n.shape, x
        n.conv(p + ".downsample", planes * 4, 1, stride=stride, bias=False)
        if shortcut_bn:
            n.bn(p + ".downsample_bn")
        assert n.shape == out
    n.add(p + ".add"); n.relu(p + ".relu3")


def basic_block(n, p, planes, stride, shortcut):
    """ResNet basic block. SHORTCUT: 'identity', 'projection' (1x1 conv +
    BN, torchvision) or 'option_a' (subsample + zero-pad the channels, no
    parameters: He et al. 2016 Sec. 4.2)."""
    x = n.shape
    n.conv(p + ".conv1", planes, 3, stride=stride, pad=1, bias=False)
    n.bn(p + ".bn1"); n.relu(p + ".relu1")
    n.conv(p + ".conv2", planes, 3, pad=1, bias=False)
    n.bn(p + ".bn2")
    if shortcut == "projection":
        out, n.shape = n.shape, x
        n.conv(p + ".downsample", planes, 1, stride=stride, bias=False)
        n.bn(p + ".downsample_bn")
        assert n.shape == out
    elif shortcut == "option_a":
        n.layer(p + ".shortcut", "shortcut", 0,
                note="subsample x[:, :, ::2, ::2] and zero-pad to %d "
                     "channels (no FLOPs, no parameters)" % planes)
    n.add(p + ".add"); n.relu(p + ".relu2")


def imagenet_stem(n):
    n.shape = (3, 224, 224)
    n.conv("conv1", 64, 7, stride=2, pad=3, bias=False)
    n.bn("bn1"); n.relu("relu"); n.maxpool("maxpool", 3, 2, pad=1)


def imagenet_head(n):
    n.avgpool("avgpool", n.shape[1], 1)
    n.fc("fc", 1000)
    n.loss()


def resnet50():
    n = Net("resnet50", "imagenet", "3x224x224", 64)
    n.notes = [
        "ResNet-50 v1 for ImageNet (He et al. 2016, torchvision layout: stride",
        "on the 3x3 conv of the bottleneck), convs without bias, BN (gamma,",
        "beta) after each conv, fc 2048->1000 with bias.",
        "",
        "GradientFlow (seeds/003, Sec. 2.3.1) trains it with 25.5M",
        "parameters and counts 153 gradient tensors in its text (its Fig. 5",
        "caption says 152). torchvision's ResNet-50 has 161 tensors: the 8",
        "extra are the gamma/beta of the BNs of the 4 projection shortcuts. To",
        "match GradientFlow's 153 these 4 shortcut BNs are folded here (the",
        "projection is a bare 1x1 conv), which removes 7,680 of torchvision's",
        "25,557,032 parameters and their (tiny) BN FLOPs.",
        "",
        "Layers: 171 here (4 stem, 10 per bottleneck, 4 shortcut convs,",
        "avgpool, fc, loss); GradientFlow counts 188 layers, a granularity",
        "its text does not define.",
        "",
        "Size: INCEPTIONN (seeds/000, Sec. I and VII-A) says 98 MB (= 97.5 MiB",
        "here), RedSync (seeds/002, Table 1) 103 MB (102.2 decimal MB",
        "here) and 8.22 GFlops (FLOPs, i.e. 2 x 4.1 GMACs).",
        "",
        "Batch 64: GradientFlow's per-GPU FP32 batch on Cluster-P (Figs. 1, 6).",
    ]
    n.sources = [GFLOW + " Sec. 2.3.1, Fig. 5: ResNet-50, 188 layers, 25.5M "
                 "parameters, 153 gradient tensors (152 in the caption); "
                 "per-GPU batch 64 on Cluster-P in FP32",
                 "He et al. 2016 ResNet-50, torchvision layout, shortcut BNs "
                 "folded to match the 153 tensors",
                 INC + " Sec. VII-A: 98 MB; " + REDSYNC +
                 " Table 1: 103 MB, 8.22 GFlops"]
    imagenet_stem(n)
    for s, (planes, blocks) in enumerate([(64, 3), (128, 4), (256, 6),
                                          (512, 3)], 1):
        for b in range(blocks):
            stride = 2 if s > 1 and b == 0 else 1
            bottleneck(n, "layer%d.%d" % (s, b), planes, stride,
                       project=(b == 0), shortcut_bn=False)
    imagenet_head(n)
    n.expects = [("params", "25.5e6", "0.01",
                  GFLOW + " Sec. 2.3.1 and Fig. 5: 25.5M"),
                 ("tensors", 153, GFLOW + " Sec. 2.3.1 text: 153 gradient "
                  "tensors (Fig. 5 caption: 152)")]
    return n


def resnet101():
    n = Net("resnet101", "imagenet", "3x224x224", 32)
    n.notes = [
        "ResNet-101 v1 for ImageNet (He et al. 2016, bottleneck blocks",
        "[3, 4, 23, 3]) exactly as torchvision's models.resnet101 builds it:",
        "stride on the 3x3 conv of the bottleneck, convs without bias, BN",
        "(gamma, beta) after each conv, the 4 projection shortcuts a 1x1 conv",
        "+ BN (the shortcut BNs are kept, unlike resnet50 here), fc 2048->1000",
        "with bias. 44,549,160 parameters (torchvision's ResNet101_Weights",
        "num_params) in 314 gradient tensors (stem conv + BN 3, 33 bottlenecks",
        "x 9, 4 shortcuts x 3, fc 2).",
        "",
        "Zhang et al. 2020 ('Is Network the Bottleneck of Distributed",
        "Training?', SIGCOMM NetAI workshop) use torchvision's",
        "models.resnet101 as is (PyTorch and Horovod on p3dn instances); their",
        "artifact's simulation/bk_time_logs/resnet101.bk.log lists the 314",
        "parameter tensors with the sizes, in the order, of the tensors below",
        "(44,549,160 parameters in all).",
        "",
        "FLOPs: torchvision lists 7.801 'GFLOPS' (_ops), which are GMACs (one",
        "multiply-add counted once; 7.801 GMACs here too); He et al. Table 1",
        "gives 7.6e9 FLOPs, also multiply-adds, for the original layout with",
        "the stride on the first 1x1 conv. In this file's 2 x MACs convention",
        "the forward pass is 15.69 GFLOPs per sample.",
        "",
        "Batch 32: Zhang et al.'s per-GPU batch, from their artifact",
        "netx-repo/training-bottleneck simulation/layerwise_bk_done.py, which",
        "times torch.rand((32, 3, 224, 224)) through models.resnet101. The",
        "training script its configs name,",
        "test_scripts/pytorch_resnet101_imagenet.py (GitHub",
        "zarzen/distributed-training), defaults to --batch-size 32 and the",
        "configs do not change it.",
    ]
    n.sources = ["He et al. 2016 ResNet-101, bottlenecks [3, 4, 23, 3], "
                 "torchvision layout with its shortcut BNs",
                 "torchvision models.resnet101: 44,549,160 parameters, 314 "
                 "tensors, 7.801 GFLOPS (GMACs)",
                 "Zhang et al. 2020, Is Network the Bottleneck of Distributed "
                 "Training?: torchvision resnet101, per-GPU batch 32 "
                 "(netx-repo/training-bottleneck "
                 "simulation/layerwise_bk_done.py)"]
    imagenet_stem(n)
    for s, (planes, blocks) in enumerate([(64, 3), (128, 4), (256, 23),
                                          (512, 3)], 1):
        for b in range(blocks):
            stride = 2 if s > 1 and b == 0 else 1
            bottleneck(n, "layer%d.%d" % (s, b), planes, stride,
                       project=(b == 0), shortcut_bn=True)
    imagenet_head(n)
    n.expects = [("params", "44549160", "0",
                  "torchvision resnet101: 44,549,160 (44.5M)"),
                 ("tensors", 314, "torchvision resnet101: 314 parameter "
                  "tensors; Zhang et al. 2020 artifact resnet101.bk.log: "
                  "314")]
    return n


def resnet18():
    n = Net("resnet18", "imagenet", "3x224x224", 64)
    n.notes = [
        "ResNet-18 for ImageNet (He et al. 2016, basic blocks [2,2,2,2];",
        "torchvision layout: convs without bias, BN after each conv, the 3",
        "projection shortcuts a 1x1 conv + BN), 11,689,512 parameters, 62",
        "gradient tensors.",
        "",
        "Pipe-SGD (seeds/001, Sec. 4) trains 'the classical ... ResNet [14]'",
        "(named ResNet18 in its results) on ImageNet with a global batch of 256",
        "on its four-node cluster: 64 per worker. Pipe-SGD gives no parameter",
        "count; the expectation below is torchvision's documented count.",
        "",
        "Input: 224x224 crops of Pipe-SGD's 256x256 images (standard practice;",
        "the paper does not state the crop).",
    ]
    n.sources = [PIPE + " Sec. 4: ResNet on ImageNet, global batch 256 on 4 "
                 "workers",
                 "He et al. 2016 ResNet-18, torchvision layout"]
    imagenet_stem(n)
    for s, planes in enumerate([64, 128, 256, 512], 1):
        for b in range(2):
            stride = 2 if s > 1 and b == 0 else 1
            sc = "projection" if s > 1 and b == 0 else "identity"
            basic_block(n, "layer%d.%d" % (s, b), planes, stride, sc)
    imagenet_head(n)
    n.expects = [("params", "11689512", "0.001",
                  "torchvision resnet18: 11,689,512 (11.7M); no seed paper "
                  "states the count")]
    return n


# ---- CIFAR CNNs -------------------------------------------------------------

def cifar_resnet(name, blocks, batch, notes, sources, expect):
    """He et al. 2016 Sec. 4.2 CIFAR ResNet-(6n+2): 3x3 conv 16, three stages
    of n basic blocks at 16/32/64 channels, option-A shortcuts, global
    average pool, fc 64->10."""
    n = Net(name, "cifar10", "3x32x32", batch)
    n.notes, n.sources, n.expects = notes, sources, [expect]
    n.shape = (3, 32, 32)
    n.conv("conv1", 16, 3, pad=1, bias=False)
    n.bn("bn1"); n.relu("relu")
    for s, planes in enumerate([16, 32, 64], 1):
        for b in range(blocks):
            stride = 2 if s > 1 and b == 0 else 1
            sc = "option_a" if s > 1 and b == 0 else "identity"
            basic_block(n, "layer%d.%d" % (s, b), planes, stride, sc)
    n.avgpool("avgpool", n.shape[1], 1)
    n.fc("fc", 10)
    n.loss()
    return n


def resnet110():
    notes = [
        "ResNet-110 for CIFAR-10 (He et al. 2016, Sec. 4.2: 6n+2 layers with",
        "n = 18, 3 stages of 18 basic blocks at 16/32/64 channels, option-A",
        "identity shortcuts: subsample and zero-pad, no shortcut parameters),",
        "convs without bias, BN after each conv, fc 64->10.",
        "",
        "3LC (seeds/004, Sec. 5.2) trains it on TensorFlow with 'a per-worker",
        "batch size of 32 images' on 10 workers. He et al. Table 6 gives 1.7M",
        "parameters (1,727,962 here).",
    ]
    sources = [TLC + " Sec. 5.2: ResNet-110 on CIFAR-10, per-worker batch 32",
               "He et al. 2016 Sec. 4.2 and Table 6: ResNet-110, 1.7M "
               "parameters, option-A shortcuts"]
    return cifar_resnet("resnet110", 18, 32, notes, sources,
                        ("params", "1.7e6", "0.02",
                         "He et al. 2016 Table 6: 1.7M"))


def resnet44():
    notes = [
        "ResNet-44 for CIFAR-10 (He et al. 2016, Sec. 4.2: n = 7 basic blocks",
        "per stage, 16/32/64 channels, option-A shortcuts), convs without",
        "bias, BN after each conv, fc 64->10; He et al. Table 6: 0.66M.",
        "",
        "RedSync (seeds/002, Table 1): 2.65 MB (decimal MB of fp32: 2.63",
        "MB here) and 0.20 GFlops (FLOPs: 0.197 here, 2 x 0.097 GMACs).",
        "",
        "Batch 64: RedSync's per-node Cifar10 batch (Sec. 3.2).",
    ]
    sources = [REDSYNC + " Table 1: ResNet44 on Cifar10, 2.65 MB, 0.20 "
               "GFlops; batch 64 per node",
               "He et al. 2016 Sec. 4.2 and Table 6: ResNet-44, 0.66M"]
    return cifar_resnet("resnet44", 7, 64, notes, sources,
                        ("params", "662500", "0.01",
                         REDSYNC + " Table 1: 2.65 MB / 4 bytes"))


def vgg16_cifar():
    n = Net("vgg16-cifar", "cifar10", "3x32x32", 64)
    n.notes = [
        "VGG-16 for CIFAR-10 as RedSync (seeds/002, Table 1: 59 MB,",
        "0.31 GFlops) trains it with PyTorch 0.4: the 13 conv 3x3 pad 1 layers",
        "of VGG-16 on 32x32 input, 5 maxpools 2x2/2 down to 512x1x1, one fc",
        "512->10. This is the widely used PyTorch CIFAR VGG16",
        "(kuangliu/pytorch-cifar models/vgg.py): conv (with bias) -> BN -> relu,",
        "and a no-op 1x1 average pool before the classifier.",
        "",
        "BN or not: the 59 MB cannot tell (the 13 BNs add 8,448 parameters,",
        "0.03 MB: 58.88 MB without, 58.91 MB with, both round to 59); BN is",
        "chosen because that PyTorch model has it and plain VGG-16 is hard to",
        "train from scratch on CIFAR-10. A 512->512->512->10 classifier",
        "(other CIFAR VGGs) would give 61.0 MB, so the single 512->10 fc fits",
        "better.",
        "",
        "59 is decimal MB (56.2 MiB here); 0.31 is GMACs, not FLOPs.",
        "",
        "Batch 64: RedSync's per-node Cifar10 batch (Sec. 3.2).",
    ]
    n.sources = [REDSYNC + " Table 1: VGG16 on Cifar10, 59 MB, 0.31 GFlops; "
                 "batch 64 per node",
                 "kuangliu/pytorch-cifar VGG16 (conv-BN-relu, fc 512->10)"]
    n.shape = (3, 32, 32)
    cfg = [[64, 64], [128, 128], [256, 256, 256], [512, 512, 512],
           [512, 512, 512]]
    for s, widths in enumerate(cfg, 1):
        for i, c in enumerate(widths, 1):
            n.conv("conv%d_%d" % (s, i), c, 3, pad=1)
            n.bn("bn%d_%d" % (s, i))
            n.relu("relu%d_%d" % (s, i))
        n.maxpool("pool%d" % s, 2, 2)
    n.avgpool("avgpool", 1, 1)
    n.fc("classifier", 10)
    n.loss()
    n.expects = [("params", "14.75e6", "0.01",
                  REDSYNC + " Table 1: 59 MB / 4 bytes")]
    return n


def cifar100_cnn_layers(n):
    """The stand-in for Pipe-SGD's CIFAR100 net (see the notes)."""
    n.shape = (3, 32, 32)
    n.conv("conv1", 64, 5, pad=2); n.relu("relu1")
    n.maxpool("pool1", 3, 2, ceil=True)
    n.conv("conv2", 64, 5, pad=2); n.relu("relu2")
    n.maxpool("pool2", 3, 2, ceil=True)
    n.conv("conv3", 128, 3, pad=1); n.relu("relu3")
    n.maxpool("pool3", 3, 2, ceil=True)
    n.fc("fc1", 384); n.relu("relu4")
    n.fc("fc2", 192); n.relu("relu5")
    n.fc("fc3", 100)
    n.loss()


CIFAR100_NOTES = [
    "Pipe-SGD (seeds/001, Sec. 4) uses 'the simple AlexNet-style CIFAR100",
    "architecture in [32]' (Liao et al. 2016) with '3 convolutional layers and",
    "2 fully connected layers followed by a softmax layer'; 'the detailed",
    "parameters are available in [32]', which is not among the seeds. This is",
    "a STAND-IN with that layer structure, in the style of the TensorFlow",
    "CIFAR-10 tutorial model: conv 5x5 3->64, conv 5x5 64->64, conv 3x3",
    "64->128, each + relu + maxpool 3x3/2, then fc ->384 + relu, fc 384->192",
    "+ relu and the softmax linear layer 192->100 (fc3).",
    "",
    "Padding: the convs use 'same' padding (pad 2, 2, 1) and the pools the",
    "Caffe/TensorFlow-SAME ceil rule, as that tutorial does:",
    "32 -> 16 -> 8 -> 4, so fc1 reads 128x4x4 = 2048 inputs.",
    "",
    "Batch 64 is ASSUMED: Pipe-SGD does not state the CIFAR100 batch.",
]


def cifar100_cnn():
    n = Net("cifar100-cnn", "cifar100", "3x32x32", 64)
    n.notes = list(CIFAR100_NOTES)
    n.sources = [PIPE + " Sec. 4: CIFAR100-CNN, 3 conv + 2 fc + softmax "
                 "(details in its ref. [32], not available); stand-in "
                 "geometry, batch 64 assumed"]
    cifar100_cnn_layers(n)
    n.expects = [("params", str(n.params()), "0",
                  "derived from the stand-in geometry; no seed paper states "
                  "the count")]
    return n


def cifar100_convex():
    n = Net("cifar100-convex", "cifar100", "3x32x32", 64)
    n.notes = CIFAR100_NOTES + [
        "",
        "CIFAR100-Convex: Pipe-SGD trains 'only the last fully connected layer",
        "while fixing the parameters of all previous layers'. The forward pass",
        "runs every layer; backward starts at fc3 (the softmax linear layer);",
        "only fc3's bias and weight are gradient tensors.",
    ]
    n.sources = [PIPE + " Sec. 4: CIFAR100-Convex, only the last fc layer "
                 "trained; stand-in geometry of CIFAR100-CNN, batch 64 assumed"]
    cifar100_cnn_layers(n)
    for l in n.layers:
        if l["name"] != "fc3":
            l["tensors"] = []
    n.backward_from = "fc3"
    n.expects = [("params", str(n.params()), "0",
                  "derived: fc3 192x100 + 100; no seed paper states the "
                  "count")]
    return n


# ---- MLPs -------------------------------------------------------------------

def mlp(n, hidden, classes):
    n.shape = (1, 28, 28)
    for i, h in enumerate(hidden, 1):
        n.fc("fc%d" % i, h)
        n.relu("relu%d" % i)
    n.fc("fc%d" % (len(hidden) + 1), classes)
    n.loss()


def hdc():
    n = Net("hdc", "mnist", "1x28x28", 64)
    n.notes = [
        "INCEPTIONN's Handwritten Digit Classification net (seeds/000,",
        "Sec. VII-A): 'five fully-connected layers', 'the dimension of each",
        "hidden layer is 500 and the model size is 2.5 MB', MNIST.",
        "",
        "Choice: a 784-500-500-10 MLP (relu assumed) has 648,010 parameters",
        "= 2.59 MB = 2.47 MiB, which matches the stated 2.5 MB; five weight",
        "layers with 500-wide hidden layers would hold 1,149,010 parameters",
        "(4.6 MB), far from it. 'Five layers' presumably counts the input and",
        "output layers or the activations; the size decides.",
        "",
        "Batch 64 is ASSUMED: INCEPTIONN's Table I (hyperparameters) is lost",
        "in the text extraction.",
    ]
    n.sources = [INC + " Sec. VII-A: HDC, hidden layers of 500, 2.5 MB, "
                 "MNIST; 784-500-500-10 chosen to match 2.5 MB; batch 64 "
                 "assumed (Table I lost)"]
    mlp(n, [500, 500], 10)
    n.expects = [("params", "625000", "0.04",
                  INC + " Sec. VII-A: 2.5 MB / 4 bytes")]
    return n


def mnist_mlp():
    n = Net("mnist-mlp", "mnist", "1x28x28", 25)
    n.notes = [
        "Pipe-SGD's MNIST-MLP (seeds/001, Sec. 4): 'a classical 3-layer",
        "perceptron ... with both hidden layers being 500-dimensional and with",
        "a global batch size of 100', on four workers: 25 per worker.",
        "",
        "784-500-500-10 with relu (activation not stated; assumed).",
    ]
    n.sources = [PIPE + " Sec. 4: MNIST-MLP, 3-layer perceptron, hidden "
                 "500-500, global batch 100 on 4 workers"]
    mlp(n, [500, 500], 10)
    n.expects = [("params", str(n.params()), "0",
                  "derived from the stated 784-500-500-10 architecture; no "
                  "seed paper states the count")]
    return n


# ---- LSTM language models ---------------------------------------------------

def lstm_lm(name, dataset, vocab, size_mb):
    """RedSync's 2-layer LSTM language model (PyTorch word_language_model
    with --tied: embedding -> dropout -> LSTM x2 (dropout between) ->
    dropout -> linear decoder -> softmax), H = emsize = 1500, BPTT 35."""
    seq, hid = 35, 1500
    n = Net(name, dataset, "%d tokens" % seq, 5)
    n.notes = [
        "RedSync's LSTM language model (seeds/002, Sec. 3.1): 'a 2-layer",
        "LSTM language model architecture with 1500 hidden units per layer",
        "(Press and Wolf, 2016)', 'We tied the weights of encoder and",
        "decoder'; PyTorch 0.4. Modelled on PyTorch's word_language_model",
        "example with --tied (emsize = nhid = 1500): embedding, dropout, a",
        "2-layer nn.LSTM (dropout between the layers), dropout, linear decoder",
        "1500->%d, softmax + cross-entropy. Vocabulary %d; one sample is one" % (vocab, vocab),
        "BPTT sequence of %d tokens (the example's default bptt)." % seq,
        "",
        "LSTM FLOPs per token per layer: 8*H*(In+H) + 17*H (script docstring).",
        "",
        "Each nn.LSTM layer has 4 gradient tensors (weight_ih 4Hx1500,",
        "weight_hh 4HxH, bias_ih 4H, bias_hh 4H). The tied encoder/decoder",
        "weight is ONE gradient tensor; its gradient accumulates the decoder's",
        "and the embedding's contributions and is complete only after the",
        "embedding's backward, so it is attributed to the 'encoder' layer",
        "(backward's last). The decoder bias is its own tensor. 10 tensors.",
        "",
        "RedSync Table 1: %s MB (decimal MB of fp32) and 2.52 GFlops, which is" % size_mb,
        "exactly the two LSTM layers' gate products over 35 tokens",
        "(2 x 2 x 4 x 1500 x 3000 x 35 = 2.52e9 FLOPs); RedSync leaves out the",
        "decoder (2 x 1500 x vocab x 35) that the total below includes.",
        "",
        "Batch 5: RedSync's per-node LSTM batch (Sec. 3.2).",
    ]
    n.sources = [REDSYNC + " Sec. 3.1 and Table 1: 2-layer LSTM, 1500 hidden, "
                 "tied encoder/decoder, %s MB, 2.52 GFlops; batch 5 per node"
                 % size_mb,
                 "Press and Wolf 2016; PyTorch word_language_model --tied, "
                 "bptt 35"]
    e = seq * hid
    n.shape = (seq, hid)
    n.layer("encoder", "embedding", 0, 0,
            [("encoder.weight", vocab * hid, (vocab, hid))],
            "%d x %d, tied with decoder.weight" % (vocab, hid))
    n.dropout("drop_emb")
    for i in range(2):
        In = hid
        per_token = 8 * hid * (In + hid) + 17 * hid
        g = 4 * hid
        tensors = [("lstm.bias_hh_l%d" % i, g, (g,)),
                   ("lstm.bias_ih_l%d" % i, g, (g,)),
                   ("lstm.weight_hh_l%d" % i, g * hid, (g, hid)),
                   ("lstm.weight_ih_l%d" % i, g * In, (g, In))]
        n.layer("lstm%d" % (i + 1), "lstm", seq * per_token,
                seq * 4 * hid * (In + hid), tensors,
                "%d tokens x (8*H*(In+H) + 17*H), H = In = %d" % (seq, hid))
        n.dropout("drop%d" % (i + 1))
    assert n.elements() == e
    n.layer("decoder", "fc", seq * (2 * hid * vocab + vocab),
            seq * hid * vocab, [("decoder.bias", vocab, (vocab,))],
            "%d tokens x (%d -> %d); weight = encoder.weight"
            % (seq, hid, vocab))
    n.shape = (seq, vocab)
    n.loss()
    n.expects = [("params", "%se6" % (size_mb / 4), "0.005",
                  REDSYNC + " Table 1: %s MB / 4 bytes" % size_mb)]
    return n


def lstm_ptb():
    return lstm_lm("lstm-ptb", "ptb", 10000, 204)


def lstm_wiki2():
    return lstm_lm("lstm-wiki2", "wikitext2", 33278, 344)


MODELS = [alexnet, vgg16, vgg16_cifar, resnet50, resnet101, resnet18,
          resnet110, resnet44, hdc, mnist_mlp, cifar100_cnn, cifar100_convex,
          lstm_ptb, lstm_wiki2]


# ---- the check --------------------------------------------------------------

# (model, paper, what, value): sizes in "MB" as printed by the paper.
CLAIMS = [
    ("alexnet", "GradientFlow Fig.5", "params", 60.9e6),
    ("alexnet", "GradientFlow Fig.5", "tensors", 26),
    ("alexnet", "RedSync Table 1", "MB", 233),
    ("alexnet", "RedSync Table 1", "GFlops", 0.72),
    ("alexnet", "INCEPTIONN VII-A", "MB", 233),
    ("vgg16", "RedSync Table 1", "MB", 528),
    ("vgg16", "RedSync Table 1", "GFlops", 15.5),
    ("vgg16", "INCEPTIONN VII-A", "MB", 525),
    ("vgg16-cifar", "RedSync Table 1", "MB", 59),
    ("vgg16-cifar", "RedSync Table 1", "GFlops", 0.31),
    ("resnet50", "GradientFlow 2.3.1", "params", 25.5e6),
    ("resnet50", "GradientFlow 2.3.1", "tensors", 153),
    ("resnet50", "RedSync Table 1", "MB", 103),
    ("resnet50", "RedSync Table 1", "GFlops", 8.22),
    ("resnet50", "INCEPTIONN VII-A", "MB", 98),
    ("resnet101", "torchvision", "params", 44549160),
    ("resnet101", "torchvision", "tensors", 314),
    ("resnet101", "torchvision _ops", "GFlops", 7.801),
    ("resnet101", "He et al. Table 1", "GFlops", 7.6),
    ("resnet44", "RedSync Table 1", "MB", 2.65),
    ("resnet44", "RedSync Table 1", "GFlops", 0.20),
    ("resnet110", "He et al. Table 6", "params", 1.7e6),
    ("hdc", "INCEPTIONN VII-A", "MB", 2.5),
    ("lstm-ptb", "RedSync Table 1", "MB", 204),
    ("lstm-ptb", "RedSync Table 1", "GFlops", 2.52),
    ("lstm-wiki2", "RedSync Table 1", "MB", 344),
    ("lstm-wiki2", "RedSync Table 1", "GFlops", 2.52),
]

# GradientFlow Sec. 3.3: (model, top layers in backward order, share of
# gradients, share of backward time).
OVERLAP = [("alexnet", 8, 96.2, 7.1), ("resnet50", 20, 56.3, 8.9)]


def rel(ours, paper):
    return "%+.1f%%" % (100.0 * (ours - paper) / paper)


def claim_line(n, what, value):
    p = n.params()
    if what == "params":
        return "%.4gM vs %.4gM (%s)" % (p / 1e6, value / 1e6, rel(p, value))
    if what == "tensors":
        t = len(n.tensors_backward())
        return "%d vs %d (%s)" % (t, value, "equal" if t == value else "DIFFER")
    if what == "MB":
        mb, mib = p * 4 / 1e6, p * 4 / 2**20
        best = "MB" if abs(mb - value) <= abs(mib - value) else "MiB"
        return ("%g: ours %.2f MB / %.2f MiB -> matches %s (%s)"
                % (value, mb, mib, best,
                   rel(mb if best == "MB" else mib, value)))
    if what == "GFlops":
        cands = [("FLOPs", n.flops()), ("MACs", n.macs())]
        lstm = sum(l["flops"] for l in n.layers if l["kind"] == "lstm")
        if lstm:
            cands.append(("FLOPs of the LSTM layers only", lstm))
        name, v = min(cands, key=lambda c: abs(c[1] / 1e9 - value))
        return ("%g: ours %.3f GFLOPs, %.3f GMACs -> matches %s (%s)"
                % (value, n.flops() / 1e9, n.macs() / 1e9, name,
                   rel(v / 1e9, value)))
    raise ValueError(what)


def overlap_shares(n, top):
    rng = list(n.backward_range())
    back = [n.layers[i] for i in reversed(rng)]
    head = back[:top]
    grads = sum(t[1] for l in head for t in l["tensors"])
    bflops = sum(2 * l["flops"] for l in head)
    all_b = sum(2 * l["flops"] for l in back)
    return (len(rng), [l["name"] for l in head], 100.0 * grads / n.params(),
            100.0 * bflops / all_b)


def check(nets, outdir):
    ok = True
    print("%-16s %12s %9s %9s %7s %9s %9s %7s" %
          ("model", "params", "MB", "MiB", "tensors", "GFLOPs", "GMACs",
           "layers"))
    for n in nets:
        p = n.params()
        print("%-16s %12d %9.3f %9.3f %7d %9.4f %9.4f %7d" %
              (n.name, p, p * 4 / 1e6, p * 4 / 2**20,
               len(n.tensors_backward()), n.flops() / 1e9, n.macs() / 1e9,
               len(n.layers)))
    print()
    print("Papers' numbers (MB: decimal 1e6 bytes or MiB 2^20, whichever is "
          "closer; GFlops: FLOPs or MACs, whichever is closer):")
    by_name = {n.name: n for n in nets}
    for model, paper, what, value in CLAIMS:
        print("  %-12s %-20s %-8s %s" % (model, paper, what,
                                         claim_line(by_name[model], what,
                                                    value)))
    print()
    print("GradientFlow Sec. 3.3: share of gradient elements and of backward "
          "FLOPs (2 x forward) in the top layers in backward order:")
    for model, top, g_paper, t_paper in OVERLAP:
        nl, names, g, t = overlap_shares(by_name[model], top)
        print("  %-9s top %2d of %3d layers: gradients %5.1f%% (paper %.1f%%),"
              " backward FLOPs %4.1f%% (paper %.1f%% of time)"
              % (model, top, nl, g, g_paper, t, t_paper))
        print("            layers: %s" % " ".join(names))
        k = top
        while overlap_shares(by_name[model], k)[2] < g_paper - 0.05:
            k += 1
        _, _, g_k, t_k = overlap_shares(by_name[model], k)
        print("            (the paper's gradient share needs the top %d layers"
              " here: %.1f%% of gradients, %.1f%% of backward FLOPs)"
              % (k, g_k, t_k))
    print()
    for n in nets:
        path = os.path.join(outdir, n.name + ".model")
        try:
            with open(path, encoding="utf-8") as f:
                same = f.read() == n.render()
        except OSError:
            same = False
        if not same:
            ok = False
            print("STALE or missing: %s (rerun tools/gen_models.py)" % path)
    if ok:
        print("All %d files in %s are up to date." % (len(nets), outdir))
    return ok


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="print the comparison with the papers and verify "
                         "the files instead of writing them")
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "models"),
        help="directory of the .model files (default: models/)")
    args = ap.parse_args(argv)
    outdir = os.path.normpath(args.out)
    nets = [f() for f in MODELS]
    if args.check:
        return 0 if check(nets, outdir) else 1
    for n in nets:
        path = os.path.join(outdir, n.name + ".model")
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(n.render())
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
