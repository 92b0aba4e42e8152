"""Random PyTorch models for `compare.py fuzz` (docs/onnx.md, "Coverage: random models"): the
shapes and hyperparameters a user brings, drawn from a seed, within the operators tessera reads.

Each model is an onnx_cases.Case, so `compare.py` exports, runs and checks it as it does the
hand-written cases: inference within 1e-4 of PyTorch, and with training the first steps' losses
within 1e-5 (relative) of PyTorch's. The same seed gives the same models and the same inputs.

Kinds of model (the seed picks one per case):
  cnn        1 to 4 layers of Conv2d (kernel 1 to 5, square or not, stride 1 to 3, padding,
             dilation 1 or 2, groups) or MaxPool2d / AvgPool2d (kernel 2 or 3, stride, padding,
             ceil_mode, count_include_pad), each maybe with BatchNorm2d, then an activation;
             Flatten and a Linear to 1 to 12 outputs. Input channels 1 to 5, 5 to 18 pixels a side.
  mlp        1 to 4 Linear layers of 1 to 70 features, each with an activation and maybe a
             LayerNorm, on 1 to 100 inputs.
  attention  nn.MultiheadAttention (1 to 4 heads of 1 to 6 features, batch first or not) on 1 to
             9 tokens.
  encoder    nn.TransformerEncoderLayer (1, 2 or 4 heads, a feed-forward of 1 to 40, ReLU or GELU,
             norm first or last) on 1 to 9 tokens.
  elementwise 2 to 5 of: broadcast products and sums with parameters, softmax and log-softmax on
             an axis, centring, a Linear, a rotation by Slice and Concat, tanh times sigmoid,
             transposes (exp(-x^2) on fewer than 3 dimensions), sqrt and row sums; on inputs of
             1 to 3 dimensions of 1 to 9.
With training (image models, registered like onnx_cases.image_case): cnn on [1, 28, 28] and mlp on
the 784 pixels, each ending in the 10 classes.
"""
import random

import torch
import torch.nn as nn

import onnx_cases
from onnx_cases import Case, Mha, Tel

ACTIVATIONS = {
    "relu": nn.ReLU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid, "gelu": nn.GELU,
    "hardtanh": nn.Hardtanh, "relu6": nn.ReLU6, "none": nn.Identity,
}


def _conv(r, c, h, w):
    """A Conv2d that leaves at least one output pixel: (make, channels, h, w, text) or None."""
    for _ in range(50):
        k = (r.choice([1, 2, 3, 4, 5]), r.choice([1, 2, 3, 4, 5])) if r.random() < 0.3 \
            else (r.choice([1, 2, 3, 5]),) * 2
        s, d = r.choice([1, 1, 2, 3]), r.choice([1, 1, 1, 2])
        p = r.randint(0, (min(k) - 1) // 2)
        g = r.choice([g for g in (1, 1, 1, 2, 3, c) if c % g == 0])
        out = g * r.randint(1, 4)
        ho = (h + 2 * p - d * (k[0] - 1) - 1) // s + 1
        wo = (w + 2 * p - d * (k[1] - 1) - 1) // s + 1
        if ho >= 1 and wo >= 1:
            def make(c=c, out=out, k=k, s=s, p=p, d=d, g=g):
                return nn.Conv2d(c, out, k, stride=s, padding=p, dilation=d, groups=g)
            return make, out, ho, wo, f"conv {c}->{out} k{k[0]}x{k[1]} s{s} p{p} d{d} g{g}"
    return None


def _pool_size(n, k, s, p, ceil):
    """PyTorch's output size of a pooling window (a last window must start inside the input or
    its left padding)."""
    span = n + 2 * p - k
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool(r, c, h, w):
    k = r.choice([2, 3])
    s, p, ceil = r.choice([1, 2, k]), r.randint(0, k // 2), r.random() < 0.3
    if h + 2 * p < k or w + 2 * p < k:
        return None
    ho, wo = _pool_size(h, k, s, p, ceil), _pool_size(w, k, s, p, ceil)
    if r.random() < 0.5:
        return (lambda: nn.MaxPool2d(k, s, p, ceil_mode=ceil)), c, ho, wo, \
            f"maxpool k{k} s{s} p{p} ceil{int(ceil)}"
    # PyTorch 1.13 exports ceil_mode with padding and count_include_pad as a Pad and an
    # AveragePool whose ONNX output size can exceed PyTorch's (docs/onnx.md, "Operators").
    cip = r.random() < 0.5 and not (ceil and p > 0)
    return (lambda: nn.AvgPool2d(k, s, p, ceil_mode=ceil, count_include_pad=cip)), c, ho, wo, \
        f"avgpool k{k} s{s} p{p} ceil{int(ceil)} pad{int(cip)}"


def _cnn_body(r, c, h, w):
    """1 to 4 layers: (makers, channels, h, w, text)."""
    makers, text = [], []
    for _ in range(r.randint(1, 4)):
        layer = _conv(r, c, h, w) if r.random() < 0.6 else _pool(r, c, h, w)
        if layer is None:
            continue
        make, c, h, w, t = layer
        makers.append(make)
        text.append(t)
        if r.random() < 0.3:
            makers.append(lambda c=c: nn.BatchNorm2d(c))
            text.append("bn")
        act = r.choice(sorted(ACTIVATIONS))
        makers.append(ACTIVATIONS[act])
        text.append(act)
    return makers, c, h, w, ", ".join(text)


def _mlp_body(r, inputs):
    """1 to 4 Linear layers: (makers, features, text)."""
    makers, text, prev = [], [], inputs
    for _ in range(r.randint(1, 4)):
        n = r.randint(1, 70)
        act = r.choice(sorted(ACTIVATIONS))
        makers += [lambda prev=prev, n=n: nn.Linear(prev, n), ACTIVATIONS[act]]
        text.append(f"linear {prev}->{n} {act}")
        if r.random() < 0.25:
            makers.append(lambda n=n: nn.LayerNorm(n))
            text.append("layernorm")
        prev = n
    return makers, prev, ", ".join(text)


class Elementwise(nn.Module):
    """2 to 5 element-wise, reduction and view operations drawn from the seed."""

    OPS = ("scale", "bias", "softmax", "centre", "linear", "rotate", "log_softmax", "gate",
           "transpose", "norm")

    def __init__(self, seed, shape):
        super().__init__()
        r = random.Random(seed)
        self.ops = [r.choice(self.OPS) for _ in range(r.randint(2, 5))]
        self.scale = nn.Parameter(torch.randn(shape[-1]))
        self.bias = nn.Parameter(torch.randn(shape[-2], 1) if len(shape) >= 2 else torch.randn(1))
        self.linear = nn.Linear(shape[-1], shape[-1])
        self.axis = r.randint(1, len(shape))
        # A rotation by 1 .. n - 1 (none for n = 1: tessera has no empty slices).
        self.shift = r.randint(1, shape[-1] - 1) if shape[-1] > 1 else 0

    def forward(self, x):
        for op in self.ops:
            if op == "scale":
                x = x * self.scale + 1.5
            elif op == "bias":
                x = x - self.bias
            elif op == "softmax":
                x = torch.softmax(x, dim=self.axis)
            elif op == "centre":
                x = x - x.mean(dim=-1, keepdim=True)
            elif op == "linear":
                x = self.linear(x)
            elif op == "rotate":
                if self.shift:
                    x = torch.cat([x[..., self.shift:], x[..., :self.shift]], dim=-1)
            elif op == "log_softmax":
                x = torch.log_softmax(x, dim=-1)
            elif op == "gate":
                x = torch.tanh(x) * torch.sigmoid(x)
            elif op == "transpose":  # there and back, through a product on the transposed view
                if x.dim() >= 3:
                    x = (x.transpose(-1, -2) * 0.5).transpose(-1, -2)
                else:
                    x = torch.exp(-x * x)  # bounded: an absolute tolerance holds
            else:  # "norm"
                x = torch.sqrt(x * x + 1.0) + x.sum(dim=-1, keepdim=True)
        return x


def _infer_case(r, name):
    """(Case, text) of one random inference model."""
    kind = r.choice(["cnn", "cnn", "mlp", "attention", "encoder", "elementwise", "elementwise"])
    dynamic = r.random() < 0.5
    if kind == "cnn":
        c, h, w = r.choice([1, 2, 3, 5]), r.randint(5, 18), r.randint(5, 18)
        makers, oc, oh, ow, text = _cnn_body(r, c, h, w)
        outs = r.randint(1, 12)

        def module(makers=makers, features=oc * oh * ow, outs=outs):
            return nn.Sequential(*[m() for m in makers], nn.Flatten(), nn.Linear(features, outs))
        return Case(name, module, (c, h, w), dynamic=dynamic), f"cnn [{c},{h},{w}]: {text}"
    if kind == "mlp":
        inputs = r.randint(1, 100)
        makers, features, text = _mlp_body(r, inputs)
        outs = r.randint(1, 9)

        def module(makers=makers, features=features, outs=outs):
            return nn.Sequential(*[m() for m in makers], nn.Linear(features, outs))
        return Case(name, module, (inputs,), dynamic=dynamic), f"mlp: {text}"
    tokens = r.randint(1, 9)
    if kind == "attention":
        heads = r.choice([1, 2, 3, 4])
        dim = heads * r.randint(1, 6)
        first = r.random() < 0.7
        return Case(name, lambda: Mha(dim, heads, first), (tokens, dim), dynamic=dynamic), \
            f"attention {tokens} tokens, {dim} features, {heads} heads, batch_first {first}"
    if kind == "encoder":
        heads = r.choice([1, 2, 4])
        dim, ffn = heads * r.randint(1, 5), r.randint(1, 40)
        first, act = r.random() < 0.5, r.choice(["relu", "gelu"])
        return Case(name, lambda: Tel(dim, heads, ffn, first, act), (tokens, dim),
                    dynamic=dynamic), \
            f"encoder layer {tokens} tokens, {dim} features, {heads} heads, ffn {ffn}, {act}, " \
            f"norm_first {first}"
    shape = tuple(r.randint(1, 9) for _ in range(r.randint(1, 3)))
    seed = r.randrange(1 << 30)
    ops = Elementwise(seed, shape).ops
    return Case(name, lambda: Elementwise(seed, shape), shape, dynamic=dynamic), \
        f"elementwise {list(shape)}: {', '.join(ops)}"


def _train_case(r, name):
    """(Case, text) of one random image model to train (registered in torch_models.MODELS)."""
    if r.random() < 0.5:
        makers, oc, oh, ow, text = _cnn_body(r, 1, 28, 28)

        def make(makers=makers, features=oc * oh * ow):
            return nn.Sequential(*[m() for m in makers], nn.Flatten(), nn.Linear(features, 10))
        return onnx_cases.image_case(name, make), f"cnn [1,28,28]: {text}"
    makers, features, text = _mlp_body(r, 784)

    def make(makers=makers, features=features):
        return nn.Sequential(nn.Flatten(), *[m() for m in makers], nn.Linear(features, 10))
    return onnx_cases.image_case(name, make), f"mlp 784: {text}"


def cases(seed, count, train):
    """`count` random cases from `seed`: [(Case, text)]; image models to train with `train`."""
    out = []
    for i in range(count):
        r = random.Random(seed * 1_000_003 + i)
        name = f"fuzz{seed}_{i}"
        out.append(_train_case(r, name) if train else _infer_case(r, name))
    return out
