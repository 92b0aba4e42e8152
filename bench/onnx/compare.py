#!/usr/bin/env python3
"""tessera against PyTorch on ONNX models (docs/onnx.md, "Tests"); run with TESSERA_PYTHON.

  compare.py export DIR [--images N]         the models of torch_models.py into DIR (a fixture)
  compare.py infer TOOL DIR MODEL [--device D --tiles T --batch B --images N --tol 1e-4]
      tessera-onnx infer on the first N test images against PyTorch's outputs (max abs diff)
  compare.py train TOOL DIR MODEL [--steps S --batch B --lr X --optimizer O --rtol R
                                   --accuracy-pp P --eval-images N]
      tessera-onnx train against PyTorch's training (same minibatches): each step's loss within
      relative R; the test accuracies within P percentage points; then TRAINED.onnx passes
      onnx.checker and PyTorch with its initializers agrees with tessera-onnx infer on it.
  compare.py inputs TOOL DIR
      models with integer inputs (an nn.Embedding of int64 token ids) and with two inputs,
      exported by PyTorch: tessera-onnx infer against PyTorch (max abs diff 1e-5), and the errors
      for a missing input, a float array for an integer input and an index beyond int32.
  compare.py dropout TOOL DIR
      an MLP with nn.Dropout exported in training mode trains (its Dropout nodes drop under the
      run's device seed): 4 steps whose losses differ from the same model exported in evaluation
      mode, the same on a second run; infer refuses the training-mode file. Exported at opset 11
      (no training_mode), its Dropout nodes drop in training and are the identity in inference.
  compare.py cases TOOL DIR [--sample] [--only REGEX] [--train-steps S] [--table FILE]
      the generated models of onnx_cases.py (convolutions, pooling, norms, activations, views,
      arithmetic, embeddings, attention, static and dynamic batch, opsets 9 to 13 and 17):
      tessera-onnx infer against PyTorch within 1e-4 (or the error a refused attribute must
      raise, naming the node, op type, attribute and opset), and the image models trained for S
      steps as `train` does; --sample runs the short list of the regular test run.
  compare.py fuzz TOOL DIR [--seed N] [--count C] [--opset O] [--train-steps S]
      random models of onnx_fuzz.py (convolution and pooling stacks, MLPs, attention, encoder
      layers, element-wise chains; the sizes and hyperparameters drawn from the seed) checked as
      `cases` checks its models: inference within 1e-4 of PyTorch, or with S > 0 image models
      trained for S steps against PyTorch (relative loss 1e-5).
  compare.py hostile TOOL DIR
      malformed, truncated, unsupported and non-constant-shape models: exit code 1 (not a
      signal), a message naming the file, node, op type and opset.
Every figure goes to stdout as JSON; any check that fails exits 1.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_models  # noqa: E402


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, text=True, capture_output=True, **kw)


def check(ok, what):
    if not ok:
        print(f"FAIL: {what}", flush=True)
        sys.exit(1)


def save_report(a, name, report):
    """The figures on stdout and in DIR/report-NAME.json (docs/onnx.md's tables)."""
    print(json.dumps(report), flush=True)
    with open(os.path.join(a.dir, f"report-{name}.json"), "w") as f:
        json.dump(report, f)


def model_file(d, model):
    return os.path.join(d, f"{model}.onnx")


def kind(model):
    base = model.split("-op")[0]
    return base, torch_models.MODELS[base].flat


def cmd_export(a):
    sys.argv = ["torch_models.py", "export", "--out-dir", a.dir, "--images", str(a.images)]
    torch_models.main()


def infer_diff(a, tool, onnx_path, base, flat, images, expected, tag):
    x = np.load(os.path.join(a.dir, f"input-{'flat' if flat else 'image'}.npy"))[:images]
    xin = os.path.join(a.dir, f"{tag}.in.npy")
    yout = os.path.join(a.dir, f"{tag}.out.npy")
    np.save(xin, x)
    cmd = [tool, "infer", onnx_path, "--input", xin, "--output", yout, "--device", a.device,
           "--model-engine", a.model_engine]
    if a.tiles:
        cmd += ["--tiles", str(a.tiles)]
    if a.batch:
        cmd += ["--batch", str(a.batch)]
    t0 = time.time()
    r = run(cmd)
    check(r.returncode == 0, f"tessera-onnx infer: {r.stderr.strip()}")
    y = np.load(yout)
    check(y.shape == expected.shape, f"output shape {y.shape}, PyTorch's {expected.shape}")
    return float(np.abs(y - expected).max()), time.time() - t0


def cmd_infer(a):
    base, flat = kind(a.model)
    expected = np.load(os.path.join(a.dir, f"{base}.torch.npy"))[:a.images]
    diff, wall = infer_diff(a, a.tool, model_file(a.dir, a.model), base, flat, a.images, expected,
                            f"{a.model}-{a.device}")
    report = {"model": a.model, "device": a.device, "images": a.images, "max_abs_diff": diff,
              "tolerance": a.tol, "wall_s": wall}
    save_report(a, f"infer-{a.model}-{a.device}-{a.images}", report)
    check(diff <= a.tol, f"{a.model}: max abs diff {diff} > {a.tol}")


def cmd_train(a):
    base, flat = kind(a.model)
    tag = f"{a.steps}" if a.lr_schedule == "constant" else f"{a.steps}-{a.lr_schedule}"
    out = os.path.join(a.dir, f"{a.model}-trained-{tag}.onnx")
    logdir = os.path.join(a.dir, f"{a.model}-train-{tag}")
    cmd = [a.tool, "train", model_file(a.dir, a.model), "--data", "fashion-mnist", "--epochs", "1",
           "--batch", str(a.batch), "--lr", str(a.lr), "--optimizer", a.optimizer,
           "--lr-schedule", a.lr_schedule, "--seed", str(a.seed), "--device", a.device,
           "--eval-images", str(a.eval_images),
           "--out", out, "--log-dir", logdir, "--quiet", "--model-engine", a.model_engine]
    if a.steps:
        cmd += ["--steps", str(a.steps)]
    if a.tiles:
        cmd += ["--tiles", str(a.tiles)]
    r = run(cmd)
    check(r.returncode == 0, f"tessera-onnx train: {r.stderr.strip()}")
    res = json.load(open(os.path.join(logdir, "result.json")))
    tess = np.array(res["loss_curve"], dtype=np.float64)
    steps = len(tess)
    sys.argv = ["torch_models.py", "train", "--model", base, "--steps", str(steps), "--batch",
                str(a.batch), "--lr", str(a.lr), "--optimizer", a.optimizer, "--seed", str(a.seed),
                "--lr-schedule", a.lr_schedule,
                "--eval-images", str(a.eval_images)]
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        torch_models.main()
    ref = json.loads(buf.getvalue())
    torch_loss = np.array(ref["losses"], dtype=np.float64)
    rel = np.abs(tess - torch_loss) / np.abs(torch_loss)
    report = {"model": a.model, "steps": steps, "max_rel_loss_diff": float(rel.max()),
              "rtol": a.rtol, "tessera_accuracy": res["eval_accuracy"],
              "torch_accuracy": ref.get("accuracy"),
              "tessera_device_s_per_step": res["step_device_s"],
              "tessera_cycles_per_step": res["cycles_per_step"],
              "tessera_wall_s_per_step": res["step_wall_s"],
              "torch_cpu_s_per_step": ref["cpu_s_per_step"],
              "device_over_torch_cpu": res["step_device_s"] / ref["cpu_s_per_step"]}
    # The trained model: onnx.checker, and PyTorch with its initializers against tessera's infer.
    sys.argv = ["torch_models.py", "evaluate", "--model", base, "--onnx", out, "--input",
                os.path.join(a.dir, f"input-{'flat' if flat else 'image'}.npy"), "--output",
                os.path.join(a.dir, f"{a.model}-trained-{tag}.torch.npy")]
    with contextlib.redirect_stdout(io.StringIO()):
        torch_models.main()
    expected = np.load(os.path.join(a.dir, f"{a.model}-trained-{tag}.torch.npy"))[:a.images]
    a.device_saved, a.device = a.device, "model"
    a.tiles, a.batch = 16, a.infer_batch
    diff, _ = infer_diff(a, a.tool, out, base, flat, a.images, expected, f"{a.model}-trained-{tag}")
    report["trained_model_infer_max_abs_diff"] = diff
    save_report(a, f"train-{a.model}-{tag}", report)
    check(a.rtol >= 1 or rel.max() <= a.rtol, f"{a.model}: loss curves differ by {rel.max()} > {a.rtol} relative")
    check(diff <= 1e-4, f"{a.model}: TRAINED.onnx in PyTorch and tessera differ by {diff}")
    if a.accuracy_pp is not None:
        pp = 100 * abs(res["eval_accuracy"] - ref["accuracy"])
        check(pp <= a.accuracy_pp, f"{a.model}: accuracies differ by {pp} pp > {a.accuracy_pp}")


def cmd_inputs(a):
    """Graph inputs beyond one float32 array: int64 token ids and two inputs."""
    import torch

    torch.manual_seed(3)
    os.makedirs(a.dir, exist_ok=True)

    class Tokens(torch.nn.Module):  # int64 ids -> embedding -> mean over tokens -> linear
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(50, 16)
            self.fc = torch.nn.Linear(16, 5)

        def forward(self, ids):
            return self.fc(self.emb(ids).mean(dim=1))

    class TwoInputs(torch.nn.Module):  # relu(fc(x) + 2 y)
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(12, 6)

        def forward(self, x, y):
            return torch.relu(self.fc(x) + 2.0 * y)

    rows, batch = 10, 4  # three runs of the exported batch, the last one padded
    rng = np.random.default_rng(5)
    cases = {
        "tokens": (Tokens(), [rng.integers(0, 50, size=(rows, 7), dtype=np.int64)]),
        "two_inputs": (TwoInputs(), [rng.standard_normal((rows, 12), dtype=np.float32),
                                     rng.standard_normal((rows, 6), dtype=np.float32)]),
    }
    report = {}
    for name, (module, arrays) in cases.items():
        module.eval()
        path = os.path.join(a.dir, f"inputs-{name}.onnx")
        example = tuple(torch.from_numpy(x[:batch]) for x in arrays)
        torch.onnx.export(module, example, path, opset_version=17,
                          input_names=[f"in{i}" for i in range(len(arrays))], output_names=["out"])
        with torch.no_grad():
            expected = module(*(torch.from_numpy(x) for x in arrays)).numpy()
        ins = []
        for i, x in enumerate(arrays):
            ins.append(os.path.join(a.dir, f"inputs-{name}.in{i}.npy"))
            np.save(ins[-1], x)
        out = os.path.join(a.dir, f"inputs-{name}.out.npy")
        cmd = [a.tool, "infer", path, "--output", out, "--batch", str(batch), "--tiles", "4"]
        for f in ins:
            cmd += ["--input", f]
        r = run(cmd)
        check(r.returncode == 0, f"{name}: tessera-onnx infer: {r.stderr.strip()}")
        y = np.load(out)
        check(y.shape == expected.shape, f"{name}: output shape {y.shape}, PyTorch's {expected.shape}")
        diff = float(np.abs(y - expected).max())
        report[name] = diff
        check(diff <= 1e-5, f"{name}: max abs diff {diff} against PyTorch")
        # The errors: one array short, and (tokens) a float array or an index beyond int32.
        if len(arrays) > 1:
            r = run(cmd[:-2])
            check(r.returncode == 1 and f"has {len(arrays)} inputs" in r.stderr,
                  f"{name}: one array short: {r.returncode} {r.stderr.strip()}")
        else:
            bad = os.path.join(a.dir, "inputs-tokens.float.npy")
            np.save(bad, arrays[0].astype(np.float32))
            r = run(cmd[:-2] + ["--input", bad])
            check(r.returncode == 1 and "is integer, the array given for it is float32" in r.stderr,
                  f"float ids: {r.returncode} {r.stderr.strip()}")
            big = arrays[0].copy()
            big[3, 2] = 1 << 40
            np.save(bad, big)
            r = run(cmd[:-2] + ["--input", bad])
            check(r.returncode == 1 and "element 23 is 1099511627776" in r.stderr,
                  f"ids beyond int32: {r.returncode} {r.stderr.strip()}")
    print(json.dumps({"max_abs_diff": report}), flush=True)


def cmd_dropout(a):
    """Training-mode Dropout nodes train under a device seed; evaluation-mode ones are absent."""
    import torch

    torch.manual_seed(7)
    os.makedirs(a.dir, exist_ok=True)
    module = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 32), torch.nn.ReLU(),
                                 torch.nn.Dropout(0.5), torch.nn.Linear(32, 10))
    example = torch.zeros(16, 784)
    files = {}
    # "training11": before opset 12 Dropout has no training_mode and runs as the run says.
    for mode, opset in (("training", 17), ("eval", 17), ("training11", 11)):
        files[mode] = os.path.join(a.dir, f"dropout-{mode}.onnx")
        module.train(mode != "eval")
        torch.onnx.export(module, example, files[mode], opset_version=opset,
                          do_constant_folding=False,
                          training=(torch.onnx.TrainingMode.EVAL if mode == "eval"
                                    else torch.onnx.TrainingMode.TRAINING))

    def train(mode, tag):
        logdir = os.path.join(a.dir, f"dropout-{tag}")
        out = os.path.join(a.dir, f"dropout-{tag}.trained.onnx")
        r = run([a.tool, "train", files[mode], "--data", "fashion-mnist", "--epochs", "1",
                 "--steps", "4", "--batch", "16", "--lr", "0.05", "--seed", "3", "--tiles", "4",
                 "--eval-images", "16", "--out", out, "--log-dir", logdir, "--quiet"])
        check(r.returncode == 0, f"{tag}: tessera-onnx train: {r.stderr.strip()}")
        return json.load(open(os.path.join(logdir, "result.json")))["loss_curve"]

    with_dropout, again, without = train("training", "a"), train("training", "b"), train("eval", "c")
    check(len(with_dropout) == 4 and all(np.isfinite(with_dropout)), f"losses {with_dropout}")
    check(with_dropout == again, f"two runs of one seed differ: {with_dropout} {again}")
    # The first step's forward drops half the hidden units: its loss is not the plain model's.
    check(all(x != y for x, y in zip(with_dropout, without)),
          f"dropout changed no loss: {with_dropout} against {without}")
    x = os.path.join(a.dir, "dropout-x.npy")
    np.save(x, np.zeros((16, 784), np.float32))
    r = run([a.tool, "infer", files["training"], "--input", x, "--output",
             os.path.join(a.dir, "dropout-y.npy")])
    check(r.returncode == 1 and "drops at random in inference" in r.stderr,
          f"infer of the training-mode file: {r.returncode} {r.stderr.strip()}")
    # Opset 11: the Dropout nodes drop in training, and are the identity in inference.
    import onnx
    check(any(n.op_type == "Dropout" for n in onnx.load(files["training11"]).graph.node),
          "the opset-11 training-mode export has no Dropout node")
    old_opset = train("training11", "d")
    # The same nodes in file order and the same run seed: the same masks as at opset 17.
    check(old_opset == with_dropout,
          f"opset 11 and opset 17 training-mode exports train differently: {old_opset} "
          f"against {with_dropout}")
    np.save(x, np.random.default_rng(5).standard_normal((16, 784), dtype=np.float32))
    ys = {}
    for mode in ("training11", "eval"):
        ys[mode] = os.path.join(a.dir, f"dropout-y-{mode}.npy")
        r = run([a.tool, "infer", files[mode], "--input", x, "--output", ys[mode], "--tiles", "4"])
        check(r.returncode == 0, f"infer of {mode}: {r.stderr.strip()}")
    check(np.array_equal(np.load(ys["training11"]), np.load(ys["eval"])),
          "opset 11: inference with the Dropout nodes differs from the evaluation-mode export")
    print(json.dumps({"losses_with_dropout": with_dropout, "losses_without": without,
                      "losses_opset11": old_opset}), flush=True)


def case_module(case):
    """The case's module as the export sees it: seeded, norms away from their fresh ones and
    zeros (the exporter merges equal initializers), BatchNorm's running statistics from a few
    random batches, then eval()."""
    import torch
    if case.train:
        return torch_models.build(case.name, 0)
    torch.manual_seed(0)
    m = case.module()
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, (torch.nn.LayerNorm, torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)):
                if getattr(mod, "weight", None) is not None:
                    mod.weight.uniform_(0.9, 1.1)
                    mod.bias.uniform_(-0.1, 0.1)
        if any(isinstance(mod, torch.nn.modules.batchnorm._BatchNorm) for mod in m.modules()):
            m.train()
            for _ in range(3):
                m(torch.randn((8,) + case.shape) * 2 + 0.5)
    m.eval()
    return m


class NoExport(str):
    """PyTorch's reason for not exporting a case at an opset before 13."""


def case_export(case, m, example, path, opset):
    import torch
    kw = dict(opset_version=opset, input_names=["x"], output_names=["y"])
    if case.dynamic:
        kw["dynamic_axes"] = {"x": {0: "batch"}, "y": {0: "batch"}}
    if case.export == "preserve":
        kw.update(do_constant_folding=False, training=torch.onnx.TrainingMode.PRESERVE)
    elif case.export == "training":
        kw.update(do_constant_folding=False, training=torch.onnx.TrainingMode.TRAINING)
        m.train()
    try:
        torch.onnx.export(m, example, path, **kw)
    except (torch.onnx.errors.OnnxExporterError, RuntimeError) as e:
        if opset >= 13:
            raise
        return NoExport(str(e).strip().splitlines()[0])  # PyTorch cannot write it at this opset
    finally:
        m.eval()
    import onnx
    return sorted({n.op_type for n in onnx.load(path).graph.node})


def case_infer(a, case, opset):
    """Export the case at one opset and compare tessera-onnx infer with PyTorch (or check its
    error). Returns the row of the coverage table."""
    import torch
    m = case_module(case)
    # A dynamic batch runs 6 rows in batches of 4 (the last one padded); a static one is exported
    # with 4 rows and runs 8. BatchNorm exported in training mode normalises by its batch's
    # statistics: one batch of 4 rows, as PyTorch's.
    batch = 4
    rows = batch if case.export == "training" else (6 if case.dynamic else 8)
    rng = np.random.default_rng(len(case.name) * 100 + opset)
    if case.dtype == "int64":
        x = rng.integers(0, case.high, size=(rows,) + case.shape, dtype=np.int64)
    else:
        x = rng.standard_normal((rows,) + case.shape, dtype=np.float32)
    tag = f"{case.name}-op{opset}"
    path = os.path.join(a.dir, f"{tag}.onnx")
    example = torch.from_numpy(x[:2] if case.dynamic and case.export != "training" else x[:batch])
    ops = case_export(case, m, example, path, opset)
    if isinstance(ops, NoExport):
        return {"case": tag, "no_export": str(ops)}
    if case.export == "training":
        m.train()
    with torch.no_grad():
        expected = m(torch.from_numpy(x)).numpy()
    m.eval()
    xin, yout = os.path.join(a.dir, f"{tag}.in.npy"), os.path.join(a.dir, f"{tag}.out.npy")
    np.save(xin, x)
    cmd = [a.tool, "infer", path, "--input", xin, "--output", yout, "--tiles", str(a.tiles)]
    if case.dynamic:
        cmd += ["--batch", str(batch)]
    r = run(cmd)
    row = {"case": tag, "ops": ops}
    if case.error:
        row["error"] = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
        check(r.returncode == 1, f"{tag}: exit code {r.returncode}, the error {case.error} "
                                 f"expected: {r.stderr.strip()}")
        for e in list(case.error) + [f"opset {opset}", "node \""]:
            check(e in r.stderr, f"{tag}: the error does not say {e!r}: {r.stderr.strip()}")
        return row
    check(r.returncode == 0, f"{tag}: tessera-onnx infer: {r.stderr.strip()}")
    y = np.load(yout)
    check(y.shape == expected.shape, f"{tag}: output shape {y.shape}, PyTorch's {expected.shape}")
    row["infer_max_abs_diff"] = float(np.abs(y - expected).max())
    check(row["infer_max_abs_diff"] <= 1e-4, f"{tag}: max abs diff {row['infer_max_abs_diff']}")
    return row


def case_train(a, case, opset, row):
    """`compare.py train` on the case's export: its first steps' losses against PyTorch's."""
    t = argparse.Namespace(tool=a.tool, dir=a.dir, model=f"{case.name}-op{opset}",
                           device="model", tiles=case.tiles, batch=8, images=16, steps=a.train_steps,
                           lr=0.05, lr_schedule="constant", optimizer="sgd", seed=1, rtol=1e-5,
                           eval_images=16, accuracy_pp=None, infer_batch=8,
                           model_engine="interp")
    cmd_train(t)
    rep = json.load(open(os.path.join(a.dir, f"report-train-{t.model}-{t.steps}.json")))
    row["train_max_rel_loss_diff"] = rep["max_rel_loss_diff"]
    row["trained_infer_max_abs_diff"] = rep["trained_model_infer_max_abs_diff"]


def write_table(path, rows):
    """The coverage table of docs/onnx.md: one line per case, its opsets side by side."""
    by_case = {}
    for r in rows:
        name, opset = r["case"].rsplit("-op", 1)
        by_case.setdefault(name, {})[opset] = r

    def figs(runs, key):
        out = []
        for opset, r in sorted(runs.items(), key=lambda kv: int(kv[0])):
            if r.get("no_export") and key == "infer_max_abs_diff":
                out.append(f"op{opset}: no export")
            elif r.get("failed"):
                out.append(f"op{opset}: FAILED")
            elif key in r:
                out.append(f"op{opset}: {r[key]:.1e}")
        return ", ".join(out)

    with open(path, "w") as f:
        f.write("| case | operators in the file | infer max abs diff | train max rel loss diff "
                "(3 steps) | error (asserted) |\n| --- | --- | --- | --- | --- |\n")
        for name, runs in by_case.items():
            newest = max(runs, key=int)
            last = runs[newest]
            err = last.get("error", "")
            if "node \"" in err:  # from the node on: the file's path is the machine's
                err = err[err.index("node \""):]
                err = err.replace("opset " + newest, "opset N")
            f.write(f"| {name} | {', '.join(last.get('ops', []))} | "
                    f"{figs(runs, 'infer_max_abs_diff')} | "
                    f"{figs(runs, 'train_max_rel_loss_diff')} | {err.replace('|', '/')} |\n")


def make_case_dir(d):
    """The directory of generated or random models, with the training comparisons' test images."""
    os.makedirs(d, exist_ok=True)
    for flat in (False, True):
        np.save(os.path.join(d, f"input-{'flat' if flat else 'image'}.npy"),
                torch_models.images("test", 16, flat))


def cmd_cases(a):
    import re
    import onnx_cases
    make_case_dir(a.dir)
    rows, failed = [], []
    for case in onnx_cases.CASES:
        if a.sample and not case.sample:
            continue
        if a.only and not re.search(a.only, case.name):
            continue
        opsets = case.opsets
        if a.sample:
            opsets = case.opsets[-1:] if case.sample is True else (case.sample,)
        for opset in opsets:
            row = {"case": f"{case.name}-op{opset}"}
            try:
                row = case_infer(a, case, opset)
                if case.train and a.train_steps and not row.get("no_export"):
                    case_train(a, case, opset, row)
            except SystemExit:  # check() failed: recorded, the other cases still run
                row["failed"] = True
                failed.append(row["case"])
            rows.append(row)
            print(json.dumps(row), flush=True)
    if a.table:
        write_table(a.table, rows)
    print(json.dumps({"cases": len(rows), "failed": failed}), flush=True)
    check(not failed, f"{len(failed)} cases failed: {failed}")


def cmd_hostile(a):
    import onnx
    from onnx import TensorProto, helper
    d = os.path.join(a.dir, "hostile")
    os.makedirs(d, exist_ok=True)
    x = os.path.join(d, "x.npy")
    np.save(x, np.zeros((2, 4), dtype=np.float32))

    def model(nodes, opset=17, inits=()):
        g = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              list(inits))
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])

    good = model([helper.make_node("Relu", ["x"], ["y"], name="r")]).SerializeToString()
    cases = {}

    def case(name, data, *expect):
        p = os.path.join(d, name + ".onnx")
        with open(p, "wb") as f:
            f.write(data)
        cases[name] = (p, expect)

    case("truncated", good[:len(good) // 2], "truncated.onnx", "not an ONNX model")
    rng = random.Random(26)
    case("random", bytes(rng.randrange(256) for _ in range(4096)), "random.onnx")
    case("empty", b"", "empty.onnx")
    case("unsupported_op",
         model([helper.make_node("Relu", ["x"], ["h"], name="r"),
                helper.make_node("HardSwish", ["h"], ["y"], name="hs")]).SerializeToString(),
         "node \"hs\"", "#1", "HardSwish", "opset 17", "not supported")
    case("opset18", model([helper.make_node("Relu", ["x"], ["y"], name="r")], opset=18)
         .SerializeToString(), "opset 18", "not supported")
    # Reshape's shape computed on the device (Relu of a float): must be a constant.
    case("nonconst_reshape",
         model([helper.make_node("Relu", ["x"], ["s"], name="r"),
                helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")])
         .SerializeToString(), "node \"reshape\"", "Reshape", "must be a constant")
    big = helper.make_tensor("w", TensorProto.FLOAT, [4, 4], np.zeros(16, np.float32).tobytes(),
                             raw=True)
    big.raw_data = big.raw_data[:20]  # 20 bytes for 16 floats
    case("short_initializer",
         model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], inits=[big])
         .SerializeToString(), "initializer \"w\"", "bytes")
    huge = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 40, 1 << 40])
    case("huge_dims",
         model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], inits=[huge])
         .SerializeToString(), "initializer \"w\"")
    # Shape arithmetic that overflows int64 while it is folded.
    case("overflow_fold",
         model([helper.make_node("Mul", ["a", "a"], ["s"], name="mul"),
                helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
               inits=[helper.make_tensor("a", TensorProto.INT64, [2], [1 << 62, 2])])
         .SerializeToString(), "node \"mul\"", "overflows int64")
    case("undefined_input", model([helper.make_node("Relu", ["nowhere"], ["y"], name="r")])
         .SerializeToString(), "\"nowhere\"", "not defined")
    results = {}
    for name, (p, expect) in cases.items():
        r = run([a.tool, "infer", p, "--input", x, "--output", os.path.join(d, "y.npy"),
                 "--batch", "2"])
        results[name] = {"exit": r.returncode, "stderr": r.stderr.strip()}
        check(r.returncode == 1, f"{name}: exit code {r.returncode} (want 1): {r.stderr}")
        for e in expect:
            check(e in r.stderr, f"{name}: the message does not say {e!r}: {r.stderr}")
    # The good model runs (the cases above fail for their own reason only).
    p = os.path.join(d, "good.onnx")
    with open(p, "wb") as f:
        f.write(good)
    r = run([a.tool, "infer", p, "--input", x, "--output", os.path.join(d, "y.npy"),
             "--batch", "2"])
    check(r.returncode == 0, f"good model: {r.stderr}")
    # A bad .npy.
    bad = os.path.join(d, "bad.npy")
    np.save(bad, np.zeros((2, 4), dtype=np.float64))
    r = run([a.tool, "infer", p, "--input", bad, "--output", os.path.join(d, "y.npy")])
    check(r.returncode == 1 and "bad.npy" in r.stderr and "float32" in r.stderr,
          f"float64 .npy: {r.returncode} {r.stderr}")
    print(json.dumps(results, indent=1))


def cmd_fuzz(a):
    import onnx_fuzz
    make_case_dir(a.dir)
    rows, failed = [], []
    for case, text in onnx_fuzz.cases(a.seed, a.count, a.train_steps > 0):
        row = {"case": f"{case.name}-op{a.opset}", "model": text}
        try:
            row.update(case_infer(a, case, a.opset))
            if a.train_steps:
                case_train(a, case, a.opset, row)
        except SystemExit:  # check() failed: recorded, the other models still run
            row["failed"] = True
            failed.append(f"{row['case']} ({text})")
        rows.append(row)
    print(json.dumps(rows, indent=1))
    check(not failed, f"{len(failed)} of {len(rows)} random models failed: " + "; ".join(failed))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("dir")
    e.add_argument("--images", type=int, default=1000)
    for name in ("infer", "train", "hostile", "inputs", "dropout", "cases", "fuzz"):
        s = sub.add_parser(name)
        s.add_argument("tool")
        s.add_argument("dir")
        if name not in ("hostile", "inputs", "dropout", "cases", "fuzz"):
            s.add_argument("model", help="e.g. lenet-op13")
            s.add_argument("--device", default="model")
            s.add_argument("--tiles", type=int, default=0)
            s.add_argument("--batch", type=int, default=32)
            s.add_argument("--images", type=int, default=64)
            s.add_argument("--model-engine", default="interp", choices=["interp", "jit"],
                           help="the model's engine (tessera-onnx --model-engine)")
    i = sub.choices["infer"]
    i.add_argument("--tol", type=float, default=1e-4)
    t = sub.choices["train"]
    t.add_argument("--steps", type=int, default=5)
    t.add_argument("--lr", type=float, default=0.05)
    t.add_argument("--optimizer", default="sgd")
    t.add_argument("--lr-schedule", default="constant", help="constant or cosine (both sides)")
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--rtol", type=float, default=1e-5,
                   help="largest relative loss difference (1: losses not compared)")
    t.add_argument("--eval-images", type=int, default=64)
    t.add_argument("--accuracy-pp", type=float, default=None)
    t.add_argument("--infer-batch", type=int, default=8, help="batch of the trained model's infer")
    c = sub.choices["cases"]
    c.add_argument("--sample", action="store_true", help="the short list (the regular test run)")
    c.add_argument("--only", default="", help="a regular expression on the case names")
    c.add_argument("--tiles", type=int, default=4)
    c.add_argument("--train-steps", type=int, default=3, help="0: no training comparisons")
    c.add_argument("--table", default="", help="the coverage table as Markdown")
    f = sub.choices["fuzz"]
    f.add_argument("--seed", type=int, default=1, help="the models and inputs drawn")
    f.add_argument("--count", type=int, default=10, help="random models")
    f.add_argument("--opset", type=int, default=17)
    f.add_argument("--tiles", type=int, default=4)
    f.add_argument("--train-steps", type=int, default=0,
                   help="0: inference only; else image models trained for this many steps")
    a = p.parse_args()
    {"fuzz": cmd_fuzz, "cases": cmd_cases, "export": cmd_export, "infer": cmd_infer, "train": cmd_train, "hostile": cmd_hostile,
     "inputs": cmd_inputs, "dropout": cmd_dropout}[a.cmd](a)


if __name__ == "__main__":
    main()
