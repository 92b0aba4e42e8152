"""tessera: an open IPU-style tile processor, from Python (docs/python.md).

Devices (open_device), executables (load, Executable), the Engine with NumPy arrays, the graph
API (Graph, Tensor, Sequence, Execute, Copy, Repeat, compile), the op library (tessera.ops),
autodiff (tessera.autodiff: Tape, Value, the typed builders, Optimizer) and ONNX models
(tessera.onnx: load, infer, train). Every error of the C++ library is raised as tessera.Error
(a RuntimeError) with its message.
"""
import sys as _sys

import numpy as _np

from ._tessera import *  # noqa: F401,F403
from ._tessera import Error, autodiff, onnx, ops  # noqa: F401

# `import tessera.autodiff` and `from tessera.ops import matmul` work as for real submodules.
_sys.modules[__name__ + ".autodiff"] = autodiff
_sys.modules[__name__ + ".ops"] = ops
_sys.modules[__name__ + ".onnx"] = onnx


def _set_learning_rate(self, engine, lr):
    """Write the learning rate into a running engine's device tensor (no recompilation)."""
    engine.write_tensor(self.lr_name, _np.array([lr], dtype=_np.float32))


autodiff.Optimizer.set_learning_rate = _set_learning_rate
