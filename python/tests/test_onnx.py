"""tessera.onnx from Python (ctest -R python.onnx; docs/python.md): models written with the onnx
package's helpers (no PyTorch needed), inferred on the model device against NumPy, and trained a
few steps on Fashion-MNIST.

Run with TESSERA_PYTHON and PYTHONPATH=<build>/python:  test_onnx.py --work DIR
A missing import (numpy, onnx) fails the test.
"""
import argparse
import os
import sys
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import tessera

ARGS = None
U = 2.0 ** -24  # unit roundoff of float32


def dense_model(path, inputs, outputs, seed, relu):
    """x [N, inputs] -> Gemm(W [outputs, inputs], transB=1, B) [-> Relu], opset 13."""
    rng = np.random.default_rng(seed)
    w = rng.uniform(-0.5, 0.5, (outputs, inputs)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, (outputs,)).astype(np.float32)
    nodes = [helper.make_node("Gemm", ["x", "W", "B"], ["z" if relu else "y"], transB=1)]
    if relu:
        nodes.append(helper.make_node("Relu", ["z"], ["y"]))
    graph = helper.make_graph(
        nodes, "dense",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", inputs])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", outputs])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return w, b


class OnnxTest(unittest.TestCase):
    def test_infer_against_numpy(self):
        path = os.path.join(ARGS.work, "dense.onnx")
        w, b = dense_model(path, 6, 3, seed=1, relu=True)
        model = tessera.onnx.load(path)
        self.assertEqual(model.opset, 13)
        self.assertEqual(model.inputs, [("x", [-1, 6])])
        self.assertEqual(sorted(model.variables), ["B", "W"])
        x = np.random.default_rng(2).uniform(-2, 2, (7, 6)).astype(np.float32)
        # 7 rows in batches of 4: the last batch is padded.
        y = tessera.onnx.infer(path, x, device="model", tiles=4, batch=4)
        self.assertEqual(y.shape, (7, 3))
        self.assertEqual(y.dtype, np.float32)
        z = x.astype(np.float64) @ w.T.astype(np.float64) + b
        # Gemm: 6 products and the bias summed in float32 in some order: within (k + 2) u of the
        # sum of magnitudes (the bound of test_tessera.matmul_bound, one more term); relu exact.
        bound = (6 + 2) * U * (np.abs(x) @ np.abs(w.T) + np.abs(b))
        self.assertTrue(np.all(np.abs(y - np.maximum(z, 0)) <= bound),
                        f"off by {np.abs(y - np.maximum(z, 0)).max()}")
        self.assertTrue((y > 0).any() and (y == 0).any())

    def test_train_a_few_steps(self):
        path = os.path.join(ARGS.work, "linear.onnx")
        out = os.path.join(ARGS.work, "linear-trained.onnx")
        w, _ = dense_model(path, 784, 10, seed=3, relu=False)
        r = tessera.onnx.train(path, out=out, steps=3, batch=8, lr=0.05, tiles=4,
                               eval_images=64, log_dir=os.path.join(ARGS.work, "train-log"))
        self.assertEqual(r["steps"], 3)
        self.assertEqual(r["losses"].shape, (3,))
        self.assertTrue(np.all(np.isfinite(r["losses"])) and np.all(r["losses"] > 0))
        self.assertTrue(0.0 <= r["accuracy"] <= 1.0)
        trained = onnx.load(out)
        onnx.checker.check_model(trained)
        w1 = {t.name: numpy_helper.to_array(t) for t in trained.graph.initializer}["W"]
        self.assertEqual(w1.shape, w.shape)
        self.assertGreater(np.abs(w1 - w).max(), 0, "training should change the weights")

    def test_errors(self):
        with self.assertRaises(tessera.Error) as e:
            tessera.onnx.infer(os.path.join(ARGS.work, "missing.onnx"), np.zeros((1, 6)))
        self.assertIn("missing.onnx", str(e.exception))
        bad = os.path.join(ARGS.work, "truncated.onnx")
        dense_model(bad, 6, 3, seed=1, relu=True)
        with open(bad, "rb") as f:
            data = f.read()
        with open(bad, "wb") as f:
            f.write(data[: len(data) // 2])
        with self.assertRaises(tessera.Error) as e:
            tessera.onnx.load(bad)
        self.assertIn("truncated.onnx", str(e.exception))


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True, help="directory for the test's files")
    ARGS, rest = parser.parse_known_args()
    os.makedirs(ARGS.work, exist_ok=True)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
