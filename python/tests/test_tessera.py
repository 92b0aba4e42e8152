"""The Python module against NumPy on the model device (ctest -R python; docs/python.md).

Run with the Python that sees numpy (TESSERA_PYTHON) and PYTHONPATH=<build>/python:
    test_tessera.py --elf <build>/sw/device-build/bin/hello.elf --work DIR
A missing import fails the test (it does not skip).
"""
import argparse
import json
import os
import sys
import unittest

import numpy as np

import tessera
from tessera import autodiff as ad
from tessera import ops

ARGS = None
U = 2.0 ** -24  # unit roundoff of float32


def matmul_bound(a, b):
    """Bound of |float32 product - exact product| for any order of the k terms.

    Each of the k - 1 additions (fused or not) and each product rounds once with relative error at
    most u, so the computed sum differs from the exact one by at most gamma_k * sum |a_i b_i| with
    gamma_k = k u / (1 - k u) (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1);
    (k + 1) u covers it for the small k here and the float64 reference's own error (~1e-16).
    """
    k = a.shape[1]
    return (k + 1) * U * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))


class DeviceTest(unittest.TestCase):
    def test_open_and_run_an_elf(self):
        dev = tessera.open_device("model", tiles=4)
        self.assertEqual(dev.info.tiles, 4)
        self.assertEqual(dev.info.backend, "model")
        result = dev.run_elf(ARGS.elf)
        self.assertEqual(result.reason, tessera.StopReason.HALTED, repr(result))
        self.assertEqual(result.exit_code, 0)
        self.assertEqual(dev.console(0), "hello from tessera tile 0\n")
        stats = dev.stats(0)
        self.assertTrue(stats["halted"])
        self.assertGreater(stats["instructions"], 10)
        self.assertEqual(len(stats["context_instructions"]), dev.info.contexts)
        self.assertEqual(sum(stats["context_instructions"]), stats["instructions"])


class GraphTest(unittest.TestCase):
    M, K, N = 5, 7, 3

    def build(self):
        """y = relu(x w), x streamed in, y streamed out, w written by the host."""
        dev = tessera.open_device("model", tiles=4)
        g = tessera.Graph(dev.target)
        x = ops.create_matmul_lhs(g, self.M, self.K, self.N, "x")
        w = ops.create_matmul_rhs(g, self.M, self.K, self.N, "w")
        prog = tessera.Sequence()
        prog.add(tessera.Copy(g.add_host_to_device_fifo("x_in", "float32", self.M * self.K), x))
        mm = ops.matmul(g, x, w, prog, "mm")
        y = ops.relu(g, mm, prog, "relu")
        prog.add(tessera.Copy(y, g.add_device_to_host_fifo("y_out", np.float32, self.M * self.N)))
        g.expose_tensor("w", w)
        g.expose_tensor("mm", mm)
        return dev, g, tessera.compile(g, prog)

    def run_engine(self, dev, exe, xs, ws):
        engine = tessera.Engine(dev, exe)
        engine.write_tensor("w", ws)
        engine.connect_stream("x_in", xs)
        y = np.zeros((self.M, self.N), np.float32)
        engine.connect_stream("y_out", y)
        result = engine.run()
        self.assertTrue(result.halted, repr(result))
        self.assertGreater(result.cycles, 0)
        return engine, y

    def test_matmul_relu_against_numpy(self):
        rng = np.random.default_rng(1)
        xs = rng.uniform(-2, 2, (self.M, self.K)).astype(np.float32)
        ws = rng.uniform(-2, 2, (self.K, self.N)).astype(np.float32)
        dev, g, compiled = self.build()
        self.assertIn("MatMulBlocked", compiled.report.codelets)
        engine, y = self.run_engine(dev, compiled.executable, xs, ws)
        mm = engine.read_tensor("mm")
        self.assertEqual(mm.shape, (self.M, self.N))
        self.assertEqual(mm.dtype, np.float32)
        want = xs.astype(np.float64) @ ws.astype(np.float64)
        err = np.abs(mm.astype(np.float64) - want)
        bound = matmul_bound(xs, ws)
        self.assertTrue(np.all(err <= bound), f"matmul off by {err.max()} (bound {bound.min()})")
        # relu is exact on the device's own products.
        np.testing.assert_array_equal(y, np.maximum(mm, 0))
        self.assertTrue((y > 0).any() and (y == 0).any(), "inputs should exercise both branches")
        np.testing.assert_array_equal(engine.read_tensor("w"), ws)

        # The same executable through a *.tess file: the same bits.
        path = os.path.join(ARGS.work, "mm.tess")
        compiled.save(path)
        exe = tessera.load(path)
        self.assertEqual(sorted(exe.tensors), ["mm", "w"])
        self.assertEqual(dict(exe.streams), {"x_in": "host-to-device", "y_out": "device-to-host"})
        dev2 = tessera.open_device("model", tiles=4)
        engine2, y2 = self.run_engine(dev2, exe, xs, ws)
        np.testing.assert_array_equal(y2, y)
        # A file does not record shapes: flat float32 unless told.
        self.assertEqual(engine2.read_tensor("mm").shape, (self.M * self.N,))
        np.testing.assert_array_equal(engine2.read_tensor("mm", shape=(self.M, self.N)), mm)

    def test_merged_compute_sets_compute_the_same(self):
        """Two independent ops share a superstep unless merge_compute_sets=False."""
        def compiled(merge):
            dev = tessera.open_device("model", tiles=4)
            g = tessera.Graph(dev.target)
            a = ops.create_linear(g, "float32", [3, 4], "a")
            b = ops.create_linear(g, "float32", [3, 4], "b")
            g.set_initial_value(a, np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5)
            g.set_initial_value(b, np.full((3, 4), 0.25))
            prog = tessera.Sequence()
            g.expose_tensor("x", ops.scale(g, a, 3.0, prog, "x"))
            g.expose_tensor("y", ops.relu(g, b, prog, "y"))
            c = tessera.compile(g, prog, merge_compute_sets=merge)
            names = [n["name"] for n in json.loads(c.report.to_json())["program"]
                     if n["kind"] == "Execute"]
            engine = tessera.Engine(dev, c.executable)
            self.assertTrue(engine.run().halted)
            return names, engine.read_tensor("x"), engine.read_tensor("y")

        merged, apart = compiled(True), compiled(False)
        self.assertEqual(merged[0], ["x + y"])
        self.assertEqual(apart[0], ["x", "y"])
        for m, s in zip(merged[1:], apart[1:]):
            np.testing.assert_array_equal(m, s)

    def test_run_tess_without_streams(self):
        g = tessera.Graph(tessera.Target(tiles=4))
        a = g.add_constant(np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5, "a")
        ops.map_linearly(g, a)
        b = ops.create_linear(g, "float32", [3, 4], "b")
        g.set_initial_value(b, np.full((3, 4), 0.25))
        prog = tessera.Sequence()
        s = ops.add(g, a, b, prog, "sum")
        g.expose_tensor("sum", s)
        path = os.path.join(ARGS.work, "sum.tess")
        tessera.compile(g, prog).save(path)
        dev = tessera.open_device("model", tiles=4)
        self.assertTrue(dev.run_tess(path).halted)
        engine = tessera.Engine(dev, tessera.load(path))
        self.assertTrue(engine.run().halted)
        want = (np.arange(12, dtype=np.float32) - 5.5) + np.float32(0.25)
        np.testing.assert_array_equal(engine.read_tensor("sum"), want)


class AutodiffTest(unittest.TestCase):
    def test_one_sgd_step_against_numpy(self):
        rows, k, classes, lr = 4, 6, 3, 0.25
        rng = np.random.default_rng(2)
        xs = rng.uniform(-1, 1, (rows, k)).astype(np.float32)
        w0 = rng.uniform(-1, 1, (k, classes)).astype(np.float32)
        labels = np.array([0, 2, 1, 2], dtype=np.int64)  # int64 is narrowed to int32 with checks

        dev = tessera.open_device("model", tiles=4)
        g = tessera.Graph(dev.target)
        x = ops.create_matmul_lhs(g, rows, k, classes, "x")
        w = ops.create_matmul_rhs(g, rows, k, classes, "w")
        y = ops.create_linear(g, "int32", [rows], "labels")
        g.set_initial_value(x, xs)
        g.set_initial_value(w, w0)
        g.set_initial_value(y, labels)
        step = tessera.Sequence()
        tape = ad.Tape(g, step)
        W = tape.parameter(w)
        logits = tape.apply1("MatMul", [tape.input(x), W], {"transA": 0, "transB": 0}, "fc")
        self.assertEqual(logits.shape, [rows, classes])
        scale = 1.0 / rows
        loss = ad.softmax_cross_entropy(tape, logits, tape.input(y), scale, "loss")
        opt = ad.Optimizer(g, "sgd", lr=0.5)
        opt.minimize(tape, loss, [W], step, loss_scale=scale)
        self.assertEqual([t for t, _ in tape.ops], ["MatMul", "SoftmaxCrossEntropy"])
        g.expose_tensor("w", w)
        g.expose_tensor("loss", loss.tensor)
        engine = tessera.Engine(dev, tessera.compile(g, step).executable)
        opt.set_learning_rate(engine, lr)  # the device's lr, not the 0.5 it was built with
        self.assertTrue(engine.run().halted)

        z = xs.astype(np.float64) @ w0.astype(np.float64)
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        onehot = np.eye(classes)[labels]
        want_loss = -np.log(p[np.arange(rows), labels])
        grad = xs.astype(np.float64).T @ ((p - onehot) * scale)
        want_w = w0 - lr * grad
        # float32 on the device: the logits within (k + 1) u |x||w| (matmul_bound), the device's
        # expf and logf within a few ulp, sums of at most 6 terms: each result is within ~1e-6 of
        # its magnitude. 1e-5 relative to the magnitudes involved leaves an order of margin and is
        # still 10^4 times smaller than the step itself (lr * |grad| ~ 0.05).
        got_loss = engine.read_tensor("loss")
        np.testing.assert_allclose(got_loss, want_loss, rtol=1e-5, atol=1e-6)
        got_w = engine.read_tensor("w")
        tol = 1e-5 * (np.abs(w0) + lr * (np.abs(xs.T) @ np.abs((p - onehot) * scale)))
        self.assertTrue(np.all(np.abs(got_w - want_w) <= tol),
                        f"w off by {np.abs(got_w - want_w).max()}")
        self.assertGreater(np.abs(got_w - w0).max(), 1e-2, "the step should move the weights")


    def test_dynamic_loss_scale_skips_overflowing_steps(self):
        # docs/autodiff.md, "Dynamic loss scale": three steps from the scale 2^127 with growth
        # after every finite step. Sample 0 (all inputs 16, label 0) makes w's first gradient
        # -16 * (2/3) / 4 * S in its first column: -inf at S = 2^127, finite at 2^126. So step 1
        # is skipped (S -> 2^126), step 2 updates (S -> 2^127), step 3 (smaller gradients now)
        # updates and may not grow S to 2^128, which is not a float32.
        rows, k, classes, lr = 4, 8, 3, 0.25
        xs = np.zeros((rows, k), dtype=np.float32)
        xs[0, :] = 16
        w0 = np.zeros((k, classes), dtype=np.float32)
        labels = np.array([0, 1, 2, 0], dtype=np.int32)
        dev = tessera.open_device("model", tiles=4)
        g = tessera.Graph(dev.target)
        x = ops.create_matmul_lhs(g, rows, k, classes, "x")
        w = ops.create_matmul_rhs(g, rows, k, classes, "w")
        y = ops.create_linear(g, "int32", [rows], "labels")
        g.set_initial_value(x, xs)
        g.set_initial_value(w, w0)
        g.set_initial_value(y, labels)
        scaler = ad.create_loss_scaler(g, 2.0 ** 127, 1, "loss_scale")
        step = tessera.Sequence()
        tape = ad.Tape(g, step)
        W = tape.parameter(w)
        logits = tape.apply1("MatMul", [tape.input(x), W], {"transA": 0, "transB": 0}, "fc")
        scaled = ad.scale_gradient(tape, logits, tape.input(scaler.scale), "ls")
        loss = ad.softmax_cross_entropy(tape, scaled, tape.input(y), 1.0 / rows, "loss")
        grads = tape.gradients(loss, [W], step, loss_scale=1.0 / rows)
        opt = ad.Optimizer(g, "sgd", lr=lr)
        opt.update([w], grads, step, "opt", scaler=scaler)
        prog = tessera.Sequence()
        prog.add(tessera.Repeat(3, step))
        g.expose_tensor("w", w)
        g.expose_tensor("scale", scaler.scale)
        g.expose_tensor("state", scaler.state)
        engine = tessera.Engine(dev, tessera.compile(g, prog).executable)
        self.assertTrue(engine.run().halted)
        self.assertEqual(engine.read_tensor("scale")[0], 2.0 ** 127)
        np.testing.assert_array_equal(engine.read_tensor("state"), [0, 1])
        # Two SGD steps at the true gradients (steps 2 and 3), in float64.
        want = w0.astype(np.float64)
        for _ in range(2):
            z = xs.astype(np.float64) @ want
            p = np.exp(z - z.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            want = want - lr * (xs.astype(np.float64).T @ ((p - np.eye(classes)[labels]) / rows))
        np.testing.assert_allclose(engine.read_tensor("w"), want, rtol=1e-5, atol=1e-6)
        with self.assertRaises(tessera.Error):
            opt.update([w], grads, step, "opt2", grad_scale=2.0, scaler=scaler)


class HalfTest(unittest.TestCase):
    """float16 tensors from Python (docs/python.md, "float16"): casts against NumPy's float16
    conversion (both round to nearest even), a float16 product against float64 on the same
    halves, and the tape's cast with its gradient."""

    def test_casts_and_product(self):
        rng = np.random.default_rng(7)
        m, k, n = 8, 32, 12
        a16 = rng.uniform(-2, 2, (m, k)).astype(np.float16)
        b16 = rng.uniform(-2, 2, (k, n)).astype(np.float16)
        x = rng.uniform(-3, 3, (m, n)).astype(np.float32)
        dev = tessera.open_device("model", tiles=4)
        g = tessera.Graph(dev.target)
        a = ops.create_matmul_lhs(g, m, k, n, "a", dtype="float16")
        b = ops.create_matmul_rhs(g, m, k, n, "b", dtype=np.float16)
        g.set_initial_value(a, a16)
        g.set_initial_value(b, b16)
        xt = ops.create_linear(g, "float32", [m, n], "x", 2)
        g.set_initial_value(xt, x)
        prog = tessera.Sequence()
        c = ops.matmul(g, a, b, prog, "c")
        h = ops.cast(g, xt, "float16", prog, "h")
        w = ops.cast(g, h, "float32", prog, "w")
        at = ops.transpose_half(g, a, prog, "at")
        for name, t in (("c", c), ("h", h), ("w", w), ("at", at)):
            g.expose_tensor(name, t)
        compiled = tessera.compile(g, prog)
        self.assertIn("MatMulAmpH", compiled.report.codelets)
        engine = tessera.Engine(dev, compiled.executable)
        self.assertTrue(engine.run().halted)
        got_h = engine.read_tensor("h")
        self.assertEqual(got_h.dtype, np.float16)
        self.assertEqual(got_h.shape, (m, n))
        np.testing.assert_array_equal(got_h.view(np.uint16), x.astype(np.float16).view(np.uint16))
        np.testing.assert_array_equal(engine.read_tensor("w"), x.astype(np.float16).astype(np.float32))
        np.testing.assert_array_equal(engine.read_tensor("at"), a16.T)
        got_c = engine.read_tensor("c")
        self.assertEqual(got_c.dtype, np.float32)
        a64, b64 = a16.astype(np.float64), b16.astype(np.float64)
        err = np.abs(got_c.astype(np.float64) - a64 @ b64)
        bound = (k + 1) * U * (np.abs(a64) @ np.abs(b64))  # products of halves are exact in float32
        self.assertTrue(np.all(err <= bound), f"product off by {err.max()}")
        # A float16 tensor written from float32 numbers is rounded by NumPy, read back as halves.
        engine.write_tensor("h", x * 2)
        np.testing.assert_array_equal(engine.read_tensor("h"), (x * 2).astype(np.float16))

    def test_cast_on_the_tape(self):
        dev = tessera.open_device("model", tiles=4)
        g = tessera.Graph(dev.target)
        x = np.linspace(-1, 1, 16, dtype=np.float32) / 3
        xt = ops.create_linear(g, "float32", [16], "x", 2)
        g.set_initial_value(xt, x)
        prog = tessera.Sequence()
        tape = ad.Tape(g, prog)
        xv = tape.parameter(xt)
        y = ad.cast(tape, ad.cast(tape, xv, "float16", "h"), "float32", "y")
        # d(sum(y) / 3)/dx: the constant 1/3 narrowed to float16 by the cast's gradient.
        grad = tape.gradients(y, [xv], prog, loss_scale=1 / 3)[0]
        g.expose_tensor("y", y.tensor)
        g.expose_tensor("g", grad)
        engine = tessera.Engine(dev, tessera.compile(g, prog).executable)
        self.assertTrue(engine.run().halted)
        np.testing.assert_array_equal(engine.read_tensor("y"),
                                      x.astype(np.float16).astype(np.float32))
        np.testing.assert_array_equal(engine.read_tensor("g"),
                                      np.full(16, np.float16(np.float32(1 / 3)), np.float32))

    def test_errors(self):
        g = tessera.Graph(tessera.Target(tiles=4))
        with self.assertRaisesRegex(tessera.Error, "float32, float16 or int32"):
            g.add_variable("float64", [4], "d")
        with self.assertRaisesRegex(tessera.Error, "constants are float32 or int32"):
            g.add_constant(np.zeros(4), "c", dtype="float16")
        h = ops.create_linear(g, "float16", [4], "h", 2)
        with self.assertRaisesRegex(tessera.Error, "float16 tensor takes numbers"):
            g.set_initial_value(h, np.array(["a", "b", "c", "d"]))


class ErrorTest(unittest.TestCase):
    def test_errors_carry_the_message(self):
        with self.assertRaises(tessera.Error) as e:
            tessera.open_device("nonsense:1")
        self.assertIn("nonsense:1", str(e.exception))
        self.assertTrue(issubclass(tessera.Error, RuntimeError))

        g = tessera.Graph(tessera.Target(tiles=4))
        tape = ad.Tape(g, tessera.Sequence())
        a = tape.input(ops.create_linear(g, "float32", [2, 3], "a"))
        with self.assertRaises(tessera.Error) as e:
            tape.apply("NoSuchOp", [a], {}, "bad")
        self.assertIn("NoSuchOp", str(e.exception))
        with self.assertRaises(tessera.Error) as e:
            tape.apply("MatMul", [a, a], {"transB": 1.5j}, "mm")
        self.assertIn("transB", str(e.exception))
        with self.assertRaises(tessera.Error) as e:
            ad.matmul(tape, a, a, "mm")  # [2, 3] x [2, 3]
        self.assertIn("mm", str(e.exception))

        prog = tessera.Sequence()
        s = ops.add(g, a.tensor, a.tensor, prog, "twice")
        g.expose_tensor("twice", s)
        dev = tessera.open_device("model", tiles=4)
        engine = tessera.Engine(dev, tessera.compile(g, prog).executable)
        with self.assertRaises(tessera.Error) as e:
            engine.write_tensor("twice", np.zeros((3, 2), np.float32))
        self.assertIn('"twice" is [2, 3]', str(e.exception))
        with self.assertRaises(tessera.Error) as e:
            engine.write_tensor("twice", np.array(["a"] * 6))
        self.assertIn("float32", str(e.exception))
        with self.assertRaises(tessera.Error) as e:
            engine.read_tensor("missing")
        self.assertIn("missing", str(e.exception))
        with self.assertRaises(tessera.Error) as e:
            g.add_variable("float64", [2], "v")
        self.assertIn("float64", str(e.exception))
        with self.assertRaises(tessera.Error) as e:
            g.set_initial_value(ops.create_linear(g, "int32", [2], "i"), np.array([1, 2**40]))
        self.assertIn("do not fit int32", str(e.exception))


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--elf", required=True, help="hello.elf of the device build")
    parser.add_argument("--work", required=True, help="directory for the test's files")
    ARGS, rest = parser.parse_known_args()
    os.makedirs(ARGS.work, exist_ok=True)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
