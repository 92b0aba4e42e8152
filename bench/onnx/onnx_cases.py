"""Small PyTorch models that vary what a user varies, for the ONNX coverage comparisons
(docs/onnx.md, "Coverage"); `compare.py cases` exports, runs and checks them.

Each case is a Case: a module class (built under torch.manual_seed), the per-row input shape
(the batch is added in front), the input's dtype, whether the batch is dynamic in the export, the
export settings, the opsets, and either nothing (tessera must agree with PyTorch) or the text the
error must carry (an operator or attribute tessera refuses: the error names the node, the op type,
the attribute and the opset, before anything runs). Cases whose module takes the image
([N,1,28,28] or [N,784]) and returns 10 logits are registered in torch_models.MODELS under their
name, so `compare.py train` trains them against PyTorch as it trains the five models.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_models


# The opsets every case is exported at: every one tessera reads before 13 (9 to 12), the first
# with opset 13's semantics and the newest. PyTorch 1.13 cannot export some cases at the older
# ones (dilated pooling before 10): the table says so.
OPSETS = (9, 10, 11, 12, 13, 17)


class Case:
    def __init__(self, name, module, shape, *, dtype="float32", dynamic=True, export="plain",
                 opsets=OPSETS, error=None, train=False, sample=False, high=None, tiles=4):
        self.name, self.module, self.shape, self.dtype = name, module, tuple(shape), dtype
        # export: "plain" is torch.onnx.export's defaults (constant folding, EVAL: BatchNorm folded
        # into its Conv); "preserve" keeps the parameters and BatchNorm (do_constant_folding False,
        # TrainingMode.PRESERVE), as the training comparisons need; "training" is
        # TrainingMode.TRAINING (BatchNorm with batch statistics, as model.train()).
        self.dynamic, self.export, self.opsets = dynamic, export, tuple(opsets)
        # sample: in the regular run's short list, at the last opset (True) or at this one (an
        # int: the opsets before 13 exercise their own semantics there).
        self.error, self.train, self.sample, self.high = error, train, sample, high
        self.tiles = tiles  # the training comparison's tiles (the encoder layer's backward: 16)


def seq(layers):
    """A module class (the registry builds each case afresh under its seed)."""
    return lambda: nn.Sequential(*layers())


def fn(f, *mods):
    """A module computing f(module..., x): the modules are registered as its children."""

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = nn.ModuleList([m() for m in mods])

        def forward(self, x):
            return f(*self.m, x)

    return M


class Mha(nn.Module):
    def __init__(self, dim=16, heads=2, batch_first=True):
        super().__init__()
        self.batch_first = batch_first
        self.att = nn.MultiheadAttention(dim, heads, batch_first=batch_first)

    def forward(self, x):  # x [N, L, E]; PyTorch's layout [L, N, E] without batch_first
        if not self.batch_first:
            x = x.transpose(0, 1)
        y = self.att(x, x, x, need_weights=False)[0]
        return y if self.batch_first else y.transpose(0, 1)


class Tel(nn.Module):
    def __init__(self, dim, heads, ffn, norm_first=False, activation="relu", batch_first=True):
        super().__init__()
        self.batch_first = batch_first
        self.layer = nn.TransformerEncoderLayer(dim, heads, ffn, dropout=0.0,
                                                activation=activation, batch_first=batch_first,
                                                norm_first=norm_first)

    def forward(self, x):
        if not self.batch_first:
            x = x.transpose(0, 1)
        y = self.layer(x)
        return y if self.batch_first else y.transpose(0, 1)


class Image(nn.Module):
    """An image model for training: body on [N,1,28,28] (or [N,784] when flat), then a Linear to
    the 10 classes over the flattened features."""

    def __init__(self, body, features):
        super().__init__()
        self.body, self.head = body, nn.Linear(features, 10)

    def forward(self, x):
        return self.head(torch.flatten(self.body(x), 1))


class Rows(nn.Module):
    """The image's 28 rows as tokens: Linear(28, dim), a body on [N, 28, dim], the token mean."""

    def __init__(self, dim, body):
        super().__init__()
        self.embed, self.body, self.head = nn.Linear(28, dim), body, nn.Linear(dim, 10)

    def forward(self, x):
        return self.head(self.body(self.embed(x.reshape(x.shape[0], 28, 28))).mean(dim=1))


def image_case(name, make, flat=False, **kw):
    """A training case: registered in torch_models.MODELS (flat: [N,784] input)."""
    cls = type(f"Case_{name}", (nn.Module,), {
        "flat": flat,
        "__init__": lambda self: (nn.Module.__init__(self), setattr(self, "net", make()))[0],
        "forward": lambda self, x: self.net(x),
    })
    torch_models.MODELS[name] = cls
    kw.setdefault("export", "preserve")
    return Case(name, cls, (784,) if flat else (1, 28, 28), train=True, **kw)


def _cases():
    C = Case
    s = dict(sample=True)
    cases = [
        # Convolutions.
        C("conv_k3_p1", seq(lambda: [nn.Conv2d(3, 4, 3, padding=1)]), (3, 8, 8), **s),
        C("conv_k5_s2_p2", seq(lambda: [nn.Conv2d(3, 4, 5, stride=2, padding=2)]), (3, 11, 11)),
        C("conv_nonsquare", seq(lambda: [nn.Conv2d(3, 4, (3, 1), stride=(2, 1), padding=(1, 0))]),
          (3, 9, 7)),
        C("conv_k2x4", seq(lambda: [nn.Conv2d(2, 3, (2, 4), stride=(1, 3))]), (2, 7, 10)),
        C("conv_dilated", seq(lambda: [nn.Conv2d(3, 4, 3, dilation=2, padding=2)]), (3, 9, 9)),
        C("conv_groups", seq(lambda: [nn.Conv2d(4, 6, 3, groups=2)]), (4, 7, 7)),
        C("conv_depthwise", seq(lambda: [nn.Conv2d(4, 4, 3, groups=4, padding=1)]), (4, 6, 6),
          **s),
        C("conv_depthwise_x2", seq(lambda: [nn.Conv2d(3, 6, 3, groups=3, stride=2)]), (3, 9, 9)),
        # padding="same" is not here: PyTorch 1.13 cannot export it (aten::_convolution_mode).
        C("conv_nobias", seq(lambda: [nn.Conv2d(3, 4, 3, bias=False), nn.ReLU()]), (3, 6, 6)),
        C("conv_reflect", seq(lambda: [nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect")]),
          (2, 6, 6), sample=11),
        C("conv_replicate", seq(lambda: [nn.Conv2d(2, 3, 3, padding=(2, 1),
                                                   padding_mode="replicate")]), (2, 5, 6)),
        C("reflection_pad2d", seq(lambda: [nn.ReflectionPad2d((2, 1, 1, 3))]), (2, 5, 4)),
        C("replication_pad2d", seq(lambda: [nn.ReplicationPad2d((1, 3, 2, 0))]), (2, 3, 4)),
        C("reflection_pad1d", seq(lambda: [nn.ReflectionPad1d((3, 1))]), (3, 6), sample=9),
        C("replication_pad1d", seq(lambda: [nn.ReplicationPad1d((0, 2))]), (3, 5)),
        C("conv1d", seq(lambda: [nn.Conv1d(3, 4, 3, padding=1)]), (3, 10), **s),
        C("conv1d_s2_dil_groups", seq(lambda: [nn.Conv1d(4, 6, 3, stride=2, dilation=2, groups=2,
                                                         padding=2), nn.BatchNorm1d(6)]), (4, 13),
          export="preserve"),
        # Pooling.
        C("maxpool_k3_s2", seq(lambda: [nn.MaxPool2d(3, 2)]), (2, 9, 9)),
        C("maxpool_k3_s2_p1", seq(lambda: [nn.MaxPool2d(3, 2, padding=1)]), (2, 8, 8), **s),
        C("maxpool_k2x3", seq(lambda: [nn.MaxPool2d((2, 3), stride=(2, 1))]), (2, 6, 7)),
        C("maxpool_ceil", seq(lambda: [nn.MaxPool2d(2, 2, ceil_mode=True)]), (2, 7, 7)),
        C("avgpool_k3_s2_p1", seq(lambda: [nn.AvgPool2d(3, 2, padding=1)]), (2, 8, 8)),
        C("avgpool_k2", seq(lambda: [nn.AvgPool2d(2)]), (2, 6, 6)),
        C("avgpool_nocount", seq(lambda: [nn.AvgPool2d(3, 2, padding=1, count_include_pad=False)]),
          (2, 8, 8), **s),
        C("avgpool_ceil", seq(lambda: [nn.AvgPool2d(2, 2, ceil_mode=True)]), (2, 7, 7)),
        C("avgpool_ceil_pad_nocount", seq(lambda: [nn.AvgPool2d(3, 2, 1, ceil_mode=True,
                                                                count_include_pad=False)]),
          (2, 8, 9)),
        C("maxpool_dilated", seq(lambda: [nn.MaxPool2d(2, dilation=2)]), (2, 7, 7), sample=11),
        C("maxpool_dilated_pad_ceil", seq(lambda: [nn.MaxPool2d((2, 3), stride=(2, 1),
                                                                padding=1, dilation=(3, 2),
                                                                ceil_mode=True)]), (2, 10, 7)),
        C("maxpool1d_dilated", seq(lambda: [nn.MaxPool1d(3, 2, padding=1, dilation=2)]), (3, 11)),
        C("avgpool_ceil_even", seq(lambda: [nn.AvgPool2d(2, 2, ceil_mode=True)]), (2, 8, 6)),
        C("maxpool_ceil_pad", seq(lambda: [nn.MaxPool2d(3, 2, padding=1, ceil_mode=True)]),
          (2, 8, 9)),
        C("pool1d", seq(lambda: [nn.MaxPool1d(3, 2, ceil_mode=True), nn.AvgPool1d(2)]), (3, 12)),
        C("adaptive_avg1", seq(lambda: [nn.Conv2d(2, 3, 3), nn.AdaptiveAvgPool2d(1),
                                        nn.Flatten()]), (2, 7, 7)),
        # Normalisation.
        C("bn_folded", seq(lambda: [nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU()]), (2, 6, 6)),
        C("bn_preserve", seq(lambda: [nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU()]),
          (2, 6, 6), export="preserve", **s),
        C("bn_train_export", seq(lambda: [nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4)]), (2, 6, 6),
          export="training"),
        C("bn1d", seq(lambda: [nn.Linear(6, 5), nn.BatchNorm1d(5)]), (6,), export="preserve"),
        C("ln_last", seq(lambda: [nn.LayerNorm(8)]), (5, 8), **s),
        C("ln_last2", seq(lambda: [nn.LayerNorm([5, 8])]), (5, 8)),
        C("ln_noaffine", seq(lambda: [nn.LayerNorm(8, elementwise_affine=False)]), (5, 8),
          opsets=(9, 10, 11, 12, 13)),  # at 17 PyTorch 1.13 writes an invalid LayerNormalization
        # Softmax and activations.
        C("softmax_last", fn(lambda x: torch.softmax(x, -1)), (5, 8)),
        C("softmax_dim1", fn(lambda x: torch.softmax(x, 1)), (5, 8), sample=11),
        C("logsoftmax_dim1_4d", fn(lambda x: torch.log_softmax(x, 1)), (3, 4, 5), sample=12),
        C("logsoftmax_last", fn(lambda x: F.log_softmax(x, -1)), (7,)),
        C("relu_tanh_sigmoid", fn(lambda x: torch.sigmoid(torch.tanh(x) + torch.relu(x))), (9,)),
        C("gelu", seq(lambda: [nn.Linear(8, 8), nn.GELU()]), (8,), **s),
        C("relu6", fn(lambda x: F.relu6(3 * x)), (9,), **s),
        C("hardtanh", fn(lambda x: F.hardtanh(x, -0.5, 0.7)), (9,), sample=9),
        # Views and reductions.
        C("view_flat", fn(lambda x: x.view(x.size(0), -1) * 2), (3, 4, 5)),
        C("reshape_mid", fn(lambda x: x.reshape(x.shape[0], 4, -1) + 1), (3, 4, 5)),
        C("flatten_start2", fn(lambda x: torch.flatten(x, start_dim=2) - 1), (3, 4, 5)),
        C("permute", fn(lambda x: x.permute(0, 2, 3, 1) * 3), (2, 3, 4), **s),
        C("transpose12", fn(lambda x: x.transpose(1, 2) + 0.5), (3, 4)),
        C("cat_dim1", fn(lambda x: torch.cat([x, x * 2], dim=1)), (3, 4)),
        C("cat_last", fn(lambda x: torch.cat([x, torch.relu(x)], dim=-1)), (2, 3, 4)),
        C("squeeze_unsqueeze", fn(lambda x: x.squeeze(1).unsqueeze(-1) * 2), (1, 5), sample=11),
        C("mean_keepdim", fn(lambda x: x - x.mean(dim=-1, keepdim=True)), (4, 6)),
        C("sum_dims", fn(lambda x: x.sum(dim=(1, 2))), (3, 4, 5), sample=12),
        C("mean_dim1", fn(lambda x: x.mean(dim=1)), (4, 6)),
        C("index_slice_chunk", fn(lambda x: (x[:, 0] * x[:, -1] + x[:, 1:3].sum(dim=1))[:, None, :3]
                                  + x.chunk(2, dim=-1)[1]), (4, 6), sample=11),
        C("pad_then_conv", fn(lambda c, x: c(F.pad(x, (1, 2, 0, 1))), lambda: nn.Conv2d(2, 3, 3)),
          (2, 5, 5), sample=9),
        C("matmul_4d", fn(lambda x: torch.matmul(x, x.transpose(-1, -2)) / 4), (2, 3, 4)),
        # Arithmetic with constants and scalars.
        C("scalar_math", fn(lambda x: (x * 2) / 3 + x ** 2 - 1), (7,), **s),
        C("one_minus", fn(lambda x: 1 - x), (7,)),
        C("sqrt", fn(lambda x: torch.sqrt(x * x + 1)), (7,)),
        C("pow3", fn(lambda x: x ** 3), (7,)),
        C("broadcast_param", fn(lambda lin, x: lin(x) * torch.arange(1.0, 7.0) + 1,
                                lambda: nn.Linear(4, 6)), (3, 4)),
        C("linear_3d", seq(lambda: [nn.Linear(8, 6), nn.ReLU(), nn.Linear(6, 3)]), (5, 8), **s),
        C("linear_3d_nobias", seq(lambda: [nn.Linear(8, 6, bias=False)]), (5, 8)),
        C("embedding", fn(lambda emb, x: emb(x), lambda: nn.Embedding(20, 6)), (5,),
          dtype="int64", high=20, **s),
        C("embedding_linear", fn(lambda emb, lin, x: lin(emb(x)).sum(dim=1),
                                 lambda: nn.Embedding(30, 8), lambda: nn.Linear(8, 4)), (6,),
          dtype="int64", high=30),
        # Attention.
        C("mha_batch_first", lambda: Mha(16, 2, True), (5, 16), **s),
        C("mha_seq_first", lambda: Mha(16, 4, False), (5, 16)),
        C("tel_relu", lambda: Tel(16, 4, 32), (6, 16)),
        C("tel_gelu_norm_first", lambda: Tel(16, 2, 24, True, "gelu"), (5, 16), **s),
        C("tel_seq_first", lambda: Tel(24, 3, 48, False, "gelu", batch_first=False), (4, 24)),
        # Shapes and attribute mixes not above (a probe of the general case).
        C("conv_s3_p2_d3", seq(lambda: [nn.Conv2d(3, 5, 3, stride=3, padding=2, dilation=3)]),
          (3, 13, 11)),
        C("conv_k1_s2", seq(lambda: [nn.Conv2d(4, 2, 1, stride=2), nn.Sigmoid()]), (4, 7, 9)),
        C("avgpool_ceil_pad_count", seq(lambda: [nn.AvgPool2d(3, 2, 1, ceil_mode=True)]),
          (3, 9, 8)),
        C("gelu_tanh", seq(lambda: [nn.Linear(6, 8), nn.GELU(approximate="tanh")]), (6,)),
        C("ln_two_dims_affine", seq(lambda: [nn.LayerNorm([3, 4])]), (2, 3, 4)),
        C("softmax_dim0_of_row", fn(lambda x: torch.softmax(x, dim=1) * x.sum(1, keepdim=True)),
          (5, 3)),
        C("permute_0312", fn(lambda x: x.permute(0, 3, 1, 2).reshape(x.shape[0], -1)), (2, 3, 4)),
        C("cat_three", fn(lambda x: torch.cat([x, x * x, 1 - x], dim=2)), (3, 2, 4)),
        C("squeeze_all", fn(lambda x: x.unsqueeze(1).squeeze() + 1), (5,)),
        C("gather_col", fn(lambda x: x[:, 2] * x[:, 0, 1:3].sum(-1, keepdim=True)), (4, 5)),
        C("mean_multi_keep", fn(lambda x: x - x.mean(dim=(2, 3), keepdim=True)), (3, 4, 5)),
        C("channel_affine", fn(lambda p, x: (x - p.weight.view(1, 3, 1, 1)) /
                               (p.bias.view(1, 3, 1, 1) ** 2 + 1).sqrt(),
                               lambda: nn.BatchNorm2d(3)), (3, 4, 4)),
        C("erf_pow_half", fn(lambda x: torch.erf(x) + (x * x + 1) ** 0.5), (9,)),
        C("batched_3d_2d", fn(lambda lin, x: torch.matmul(x, lin.weight) + lin.bias[:5],
                              lambda: nn.Linear(5, 6)), (4, 6)),
        C("linear_relu_chain_odd", seq(lambda: [nn.Linear(7, 9), nn.ReLU(), nn.Linear(9, 5),
                                                nn.Tanh(), nn.Linear(5, 3)]), (7,)),
        # A static batch.
        C("static_linear", seq(lambda: [nn.Linear(8, 6), nn.Tanh()]), (8,), dynamic=False),
        C("static_conv_view", fn(lambda c, x: c(x).view(x.shape[0], -1),
                                 lambda: nn.Conv2d(2, 3, 3)), (2, 5, 5), dynamic=False),
        C("static_tel", lambda: Tel(16, 2, 32), (5, 16), dynamic=False),
    ]
    cases += [
        # Training against PyTorch.
        image_case("t_conv", lambda: Image(nn.Sequential(
            nn.Conv2d(1, 4, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(4, 4, 3, groups=4, padding=1), nn.Tanh(),
            nn.Conv2d(4, 6, (3, 1), stride=(2, 1), bias=False)), 6 * 6 * 14), **s),
        image_case("t_pool", lambda: Image(nn.Sequential(
            nn.Conv2d(1, 4, 5, stride=2, padding=2, dilation=1), nn.Sigmoid(),
            nn.MaxPool2d(3, 2, padding=1, ceil_mode=True),
            nn.AvgPool2d(3, 2, padding=1, ceil_mode=True, count_include_pad=False)), 4 * 5 * 5)),
        image_case("t_conv1d", lambda: fn(
            lambda c, lin, x: lin(torch.flatten(F.max_pool1d(torch.relu(c(
                x.reshape(x.shape[0], 28, 28))), 2), 1)),
            lambda: nn.Conv1d(28, 8, 3, stride=2), lambda: nn.Linear(8 * 6, 10))()),
        image_case("t_clip", lambda: nn.Sequential(
            nn.Linear(784, 16), nn.ReLU6(), nn.Linear(16, 16), nn.Hardtanh(-0.5, 0.5),
            nn.Linear(16, 10)), flat=True, **s),
        image_case("t_reflect", lambda: Image(nn.Sequential(
            nn.ReflectionPad2d(1), nn.Conv2d(1, 4, 3, stride=2), nn.ReLU(),
            nn.Conv2d(4, 4, 3, padding=2, padding_mode="replicate"), nn.Tanh()), 4 * 16 * 16),
            **s),
        image_case("t_dilated_pool", lambda: Image(nn.Sequential(
            nn.Conv2d(1, 4, 3, stride=2), nn.ReLU(),
            nn.MaxPool2d(3, stride=2, padding=1, dilation=2)), 4 * 6 * 6)),
        image_case("t_bn", lambda: Image(nn.Sequential(
            nn.Conv2d(1, 4, 3, stride=2), nn.BatchNorm2d(4), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1)), 4)),
        image_case("t_ln_gelu", lambda: nn.Sequential(
            nn.Linear(784, 32), nn.LayerNorm(32), nn.GELU(), nn.Linear(32, 10)), flat=True, **s),
        image_case("t_math", lambda: fn(lambda a, b, x: b(1 - torch.tanh(a(x) * 2) ** 2 / 3),
                                        lambda: nn.Linear(784, 16),
                                        lambda: nn.Linear(16, 10))(), flat=True),
        image_case("t_logsoftmax", lambda: nn.Sequential(
            nn.Linear(784, 16), nn.Sigmoid(), nn.Linear(16, 10), nn.LogSoftmax(dim=1)),
            flat=True),
        image_case("t_mha", lambda: Rows(16, Mha(16, 2, True)), **s),
        image_case("t_tel", lambda: Rows(16, Tel(16, 2, 32, True, "gelu")), tiles=16),
    ]
    return cases


CASES = _cases()
