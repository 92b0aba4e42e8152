#!/usr/bin/env python3
"""PyTorch models for the ONNX comparisons (docs/onnx.md): build, export, run and train them.

Run with Debian's Python (CMake's TESSERA_PYTHON), which sees python3-torch and python3-onnx.

  torch_models.py export --out-dir D [--models mlp,lenet,...] [--opsets 13,17] [--images N]
      D/<model>-op<opset>.onnx: the model with its initial weights (torch.manual_seed(seed)),
      dynamic batch; D/input-<kind>.npy: the first N test images ([N,784] or [N,1,28,28], in
      [0, 1]); D/<model>.torch.npy: PyTorch's first output on them.
  torch_models.py train --model M --steps S [--batch B --lr X --optimizer O --seed S]
      PyTorch's training on the CPU with tessera-bench's minibatch order for --seed (the same
      std::mt19937 and Fisher-Yates shuffle), printing JSON: each step's loss, the test accuracy,
      the CPU time per step.
      --ulp-noise [--noise-seed N]: one ulp of noise in every weight and gradient (the curve's
      sensitivity to rounding).
  torch_models.py evaluate --model M --onnx TRAINED.onnx --input X.npy --output Y.npy
      PyTorch's first output with the initializers of TRAINED.onnx loaded by name.
"""
import argparse
import gzip
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DATA_DIR = "/usr/share/datasets/fashion-mnist"


class Mlp(nn.Module):
    """784-128-10 with ReLU (the benchmark's default MLP, in PyTorch's layout)."""
    flat = True
    hidden = 128

    def __init__(self):
        super().__init__()
        self.fc0 = nn.Linear(784, self.hidden)
        self.fc1 = nn.Linear(self.hidden, 10)

    def forward(self, x):
        return self.fc1(F.relu(self.fc0(x)))


class MlpSmall(Mlp):
    """784-16-10: small enough for the RTL's 64 KiB tiles."""
    hidden = 16


class Lenet(nn.Module):
    """LeNet-5 of bench/model.cpp (docs/training.md, "Models"): the same layer shapes."""
    flat = False

    def __init__(self):
        super().__init__()
        self.conv0 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv1 = nn.Conv2d(6, 16, 5)
        self.fc0 = nn.Linear(400, 120)
        self.fc1 = nn.Linear(120, 84)
        self.fc2 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv0(x)), 2)
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(F.relu(self.fc0(x)))))


class CnnBn(nn.Module):
    """A small CNN with batch normalisation, average pooling and a global average pool."""
    flat = False

    def __init__(self):
        super().__init__()
        self.conv0 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn0 = nn.BatchNorm2d(8)
        self.conv1 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn0(self.conv0(x))), 2)
        x = F.avg_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.adaptive_avg_pool2d(x, 1)
        return self.fc(torch.flatten(x, 1))


class Encoder(nn.Module):
    """A tiny transformer encoder over the image's 28 rows as tokens, written with Linear,
    LayerNorm, softmax and GELU (so the export uses the ONNX operators of issue 26): a
    projection, a position table, one pre-norm block (2-head self-attention, a GELU MLP), a
    final LayerNorm, the mean over the tokens and a classifier."""
    flat = False
    tokens, dim, heads = 28, 32, 2

    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(28, self.dim)
        self.pos = nn.Parameter(torch.randn(self.tokens, self.dim) * 0.02)
        self.ln0 = nn.LayerNorm(self.dim)
        self.qkv = nn.Linear(self.dim, 3 * self.dim)
        self.proj = nn.Linear(self.dim, self.dim)
        self.ln1 = nn.LayerNorm(self.dim)
        self.mlp0 = nn.Linear(self.dim, 2 * self.dim)
        self.mlp1 = nn.Linear(2 * self.dim, self.dim)
        self.ln2 = nn.LayerNorm(self.dim)
        self.head = nn.Linear(self.dim, 10)

    def forward(self, x):
        n = x.shape[0]
        x = self.embed(x.reshape(n, self.tokens, 28)) + self.pos
        h = self.ln0(x)
        q, k, v = self.qkv(h).split(self.dim, dim=-1)
        hd = self.dim // self.heads
        q = q.reshape(n, self.tokens, self.heads, hd).transpose(1, 2)
        k = k.reshape(n, self.tokens, self.heads, hd).transpose(1, 2)
        v = v.reshape(n, self.tokens, self.heads, hd).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-2, -1) / (hd ** 0.5), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(n, self.tokens, self.dim)
        x = x + self.proj(y)
        x = x + self.mlp1(F.gelu(self.mlp0(self.ln1(x))))
        return self.head(self.ln2(x).mean(dim=1))


class TorchEncoder(nn.Module):
    """nn.TransformerEncoderLayer itself (its export is reported in docs/onnx.md)."""
    flat = False

    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(28, 32)
        self.layer = nn.TransformerEncoderLayer(32, 2, 64, dropout=0.0, activation="gelu",
                                                batch_first=True)
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        x = self.layer(self.embed(x.reshape(x.shape[0], 28, 28)))
        return self.head(x.mean(dim=1))


MODELS = {"mlp": Mlp, "mlp16": MlpSmall, "lenet": Lenet, "cnn_bn": CnnBn, "encoder": Encoder,
          "torch_encoder": TorchEncoder}


def build(name, seed):
    torch.manual_seed(seed)
    m = MODELS[name]()
    # torch.onnx.export merges initializers with equal values: fresh LayerNorms (ones, zeros)
    # would become one shared tensor in the file, which an ONNX consumer then trains as one
    # parameter while PyTorch trains three. Distinct starting values keep the file's parameters
    # PyTorch's.
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, (nn.LayerNorm, nn.BatchNorm2d)):
                mod.weight.uniform_(0.9, 1.1)
                mod.bias.uniform_(-0.1, 0.1)
    if any(isinstance(mod, nn.modules.batchnorm._BatchNorm) for mod in m.modules()):
        # Running statistics that are not the fresh zeros and ones: the exporter would merge two
        # BatchNorms' of one width into one shared initializer (trained as one), and the inference
        # comparison exercises them. One pass over a few training images in training mode.
        m.train()
        with torch.no_grad():
            m(torch.from_numpy(images("train", 256, getattr(m, "flat", False))))
    m.eval()
    return m


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def split(kind):
    prefix = "train" if kind == "train" else "t10k"
    x = read_idx(os.path.join(DATA_DIR, f"{prefix}-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(DATA_DIR, f"{prefix}-labels-idx1-ubyte.gz"))
    return x, y


def to_float(pixels):
    """tessera's conversion: byte * (1/255 as float32), then + 0 (one rounding)."""
    return pixels.astype(np.float32) * np.float32(1.0 / 255.0)


def images(kind, n, flat):
    x, _ = split(kind)
    x = to_float(x[:n])
    return x.reshape(n, 784) if flat else x.reshape(n, 1, 28, 28)


class Minibatches:
    """tessera-bench's minibatch order (bench/train/minibatcher.cpp) for seed S: std::mt19937(S+1)
    (numpy's MT19937 with the legacy init_genrand seeding gives the same words), the order
    0..N-1 shuffled at the start of every epoch by Fisher-Yates with rejection sampling."""

    def __init__(self, count, batch, seed):
        self.bg = np.random.MT19937()
        self.bg._legacy_seeding(seed + 1)
        self.count, self.batch = count, batch
        self.order = np.arange(count, dtype=np.int64)
        self.step = 0
        self.shuffle()

    def word(self):
        return int(self.bg.random_raw())

    def below(self, n):
        limit = (1 << 32) - (1 << 32) % n
        while True:
            x = self.word()
            if x < limit:
                return x % n

    def shuffle(self):
        o = self.order
        for i in range(self.count - 1, 0, -1):
            j = self.below(i + 1)
            o[i], o[j] = o[j], o[i]

    def next(self):
        per_epoch = self.count // self.batch
        idx = self.order[self.step * self.batch:(self.step + 1) * self.batch].copy()
        self.step += 1
        if self.step == per_epoch:
            self.step = 0
            self.shuffle()
        return idx


def export(args):
    os.makedirs(args.out_dir, exist_ok=True)
    report = {}
    for name in args.models.split(","):
        m = build(name, args.seed)
        x = torch.from_numpy(images("test", args.images, m.flat))
        np.save(os.path.join(args.out_dir, f"input-{'flat' if m.flat else 'image'}.npy"),
                x.numpy())
        with torch.no_grad():
            y = m(x).numpy()
        np.save(os.path.join(args.out_dir, f"{name}.torch.npy"), y)
        for opset in [int(o) for o in args.opsets.split(",")]:
            path = os.path.join(args.out_dir, f"{name}-op{opset}.onnx")
            try:
                torch.onnx.export(m, x[:2], path, opset_version=opset, input_names=["x"],
                                  output_names=["logits"],
                                  dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}},
                                  do_constant_folding=False,
                                  # PRESERVE (the model is in eval mode): EVAL would fold each
                                  # BatchNorm into its Conv, leaving nothing to train.
                                  training=torch.onnx.TrainingMode.PRESERVE)
                import onnx
                ops = sorted({n.op_type for n in onnx.load(path).graph.node})
                report[f"{name}-op{opset}"] = ops
            except Exception as e:  # reported, not fatal: e.g. an operator torch cannot export
                report[f"{name}-op{opset}"] = f"export failed: {e}"
    print(json.dumps(report, indent=1))


def train(args):
    m = build(args.model, args.seed_model)
    m.train()
    xs, ys = split("train")
    batches = Minibatches(len(ys), args.batch, args.seed)
    if args.optimizer == "sgd":
        opt = torch.optim.SGD(m.parameters(), lr=args.lr)
    elif args.optimizer == "momentum":
        opt = torch.optim.SGD(m.parameters(), lr=args.lr, momentum=args.momentum)
    else:
        opt = torch.optim.Adam(m.parameters(), lr=args.lr)
    torch.set_num_threads(1)
    noise = torch.Generator().manual_seed(args.noise_seed)
    if args.ulp_noise:
        with torch.no_grad():
            for p in m.parameters():
                p.mul_(1 + 2**-23 * (torch.rand(p.shape, generator=noise) - 0.5).sign())
    losses, cpu = [], 0.0
    for step in range(args.steps):
        if args.lr_schedule == "cosine":
            # tessera's rate (bench/train/lr_schedule.cpp): in double, rounded once to float32.
            rate = float(np.float32(args.lr * 0.5 * (1 + math.cos(math.pi * step / args.steps))))
            for g in opt.param_groups:
                g["lr"] = rate
        idx = batches.next()
        x = to_float(xs[idx])
        x = torch.from_numpy(x.reshape(len(idx), 784) if m.flat else x.reshape(len(idx), 1, 28, 28))
        y = torch.from_numpy(ys[idx].astype(np.int64))
        t0 = time.process_time()
        opt.zero_grad()
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        if args.ulp_noise:
            # One ulp of rounding noise in every weight and gradient element: how far PyTorch's own
            # loss curve moves when only roundings change (docs/onnx.md, "Tolerance").
            for p in m.parameters():
                p.grad.mul_(1 + 2**-23 * (torch.rand(p.shape, generator=noise) - 0.5).sign())
        opt.step()
        cpu += time.process_time() - t0
        losses.append(float(loss))
    result = {"losses": losses, "cpu_s_per_step": cpu / max(1, args.steps)}
    if args.eval_images:
        m.eval()
        tx, ty = split("test")
        n = args.eval_images
        x = to_float(tx[:n])
        x = torch.from_numpy(x.reshape(n, 784) if m.flat else x.reshape(n, 1, 28, 28))
        with torch.no_grad():
            pred = m(x).argmax(1).numpy()
        result["accuracy"] = float((pred == ty[:n]).mean())
    print(json.dumps(result))


def evaluate(args):
    import onnx
    from onnx import numpy_helper
    model = onnx.load(args.onnx)
    onnx.checker.check_model(model)
    m = build(args.model, 0)
    state = m.state_dict()
    loaded = 0
    for init in model.graph.initializer:
        if init.name in state:
            state[init.name].copy_(torch.from_numpy(numpy_helper.to_array(init).copy()))
            loaded += 1
    if loaded == 0:
        sys.exit(f"{args.onnx}: no initializer names a parameter of {args.model}")
    x = torch.from_numpy(np.load(args.input))
    with torch.no_grad():
        np.save(args.output, m(x).numpy())
    print(json.dumps({"initializers_loaded": loaded, "checker": "passed"}))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("--out-dir", required=True)
    e.add_argument("--models", default="mlp,mlp16,lenet,cnn_bn,encoder,torch_encoder")
    e.add_argument("--opsets", default="13,17")
    e.add_argument("--images", type=int, default=64)
    e.add_argument("--seed", type=int, default=0)
    t = sub.add_parser("train")
    t.add_argument("--model", required=True, choices=MODELS)
    t.add_argument("--steps", type=int, default=10)
    t.add_argument("--batch", type=int, default=32)
    t.add_argument("--lr", type=float, default=0.05)
    t.add_argument("--optimizer", default="sgd", choices=["sgd", "momentum", "adam"])
    t.add_argument("--momentum", type=float, default=0.9)
    t.add_argument("--seed", type=int, default=1, help="tessera's --seed (order: seed + 1)")
    t.add_argument("--seed-model", type=int, default=0, help="the export's torch seed")
    t.add_argument("--eval-images", type=int, default=0)
    t.add_argument("--ulp-noise", action="store_true",
                   help="multiply each initial weight and each gradient element by 1 +- 2^-24")
    t.add_argument("--noise-seed", type=int, default=5, help="the --ulp-noise generator's seed")
    t.add_argument("--lr-schedule", default="constant", choices=["constant", "cosine"],
                   help="cosine: step s at lr (1 + cos(pi s / steps)) / 2, as tessera's")
    v = sub.add_parser("evaluate")
    v.add_argument("--model", required=True, choices=MODELS)
    v.add_argument("--onnx", required=True)
    v.add_argument("--input", required=True)
    v.add_argument("--output", required=True)
    args = p.parse_args()
    {"export": export, "train": train, "evaluate": evaluate}[args.cmd](args)


if __name__ == "__main__":
    main()
