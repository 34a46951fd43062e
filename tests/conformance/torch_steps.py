#!/usr/bin/python3
"""PyTorch reference runner of `xwires conformance` (api/conformance.h).

Builds the architecture's PyTorch twin (python/xwires/torch_models.py, the
package's `torch_model()`, loaded by path so the compiled part is not
needed), loads xwires' initial weights with load_state_dict(strict=True),
trains config.steps steps of torch.optim.Adam with nn.CrossEntropyLoss on
the given batches in order, and writes every state_dict tensor after each
step, plus the eval-mode logits of the test images for the initial and the
final weights.

Usage: torch_steps.py IN_DIR OUT_DIR
  IN_DIR: config.json, init.xwt, data.xwt (x_train, y_train, x_test)
  OUT_DIR/steps.xwt: "<step>/<state_dict name>" for step 1..steps
  OUT_DIR/logits.xwt: "init", "final" [n_test, classes], and
    "reference_error" [steps]: after each step, how far these float32 weights
    are from the same steps run in float64 (the worst tensor, measured as
    xwires measures its own difference: max |a - b| over the largest element
    of the tensor's module), i.e. how much rounding this problem amplifies.
  OUT_DIR/float64.xwt: the float64 run's float tensors after each step, each
    as two float32 tensors "<step>/<name>" (hi, the float nearest the double)
    and "<step>/<name>@lo" (the float nearest the remainder), so that
    hi + lo is the double to 2^-48 of its value: xwires measures its own
    distance from the float64 run with it (api/conformance.cc).
  OUT_DIR/relu.xwt: "<step>/<call>", the input of every ReLU call of the
    float32 run's training forward pass of each step, in call order (NCHW,
    or [N, features] after a linear layer): xwires takes these decisions at
    inputs within rounding of zero (api/conformance_shadow.h).
The float32 run goes first and records its ReLU inputs; the float64 run then
takes the float32 run's decision at every ReLU (x * (z32 > 0)), so that
reference_error and float64.xwt measure the arithmetic, not which side of
zero an input within rounding of it lands on; it prints how many decisions
it had to change per step.
"""
import importlib.util
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xwt  # noqa: E402

_MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                       "xwires", "torch_models.py")


def torch_models():
    spec = importlib.util.spec_from_file_location("xw_torch_models", _MODELS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Relus:
    """torch.nn.functional.relu, recording or forcing decisions per step.

    nn.ReLU calls F.relu too, so this one function sees every ReLU of the
    twins (python/xwires/torch_models.py, torchvision's blocks)."""

    def __init__(self, relu):
        self.relu = relu
        self.record = None  # list: this step's inputs, while recording
        self.force = None   # list: the inputs whose decisions to take
        self.index = 0
        self.changed = 0

    def begin(self, record=None, force=None):
        self.record, self.force, self.index, self.changed = record, force, 0, 0

    def __call__(self, x, inplace=False):
        call = self.index
        self.index += 1
        if self.record is not None:
            self.record.append(x.detach().to(torch.float32).clone())  # before an in-place relu
        if self.force is None:
            return self.relu(x, inplace=inplace)
        if call >= len(self.force) or self.force[call].shape != x.shape:
            raise RuntimeError(f"ReLU call {call}: the float32 run made no such call")
        keep = self.force[call] > 0
        self.changed += int(((x.detach() > 0) != keep).sum())
        return x * keep.to(x.dtype)


def state_of(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def train(model, config, data, dtype, on_step, before_step=lambda step: None):
    """config.steps Adam steps of `model` (in `dtype`) on the batches in order."""
    x = torch.from_numpy(data["x_train"]).to(dtype)
    y = torch.from_numpy(data["y_train"])
    opt = torch.optim.Adam(model.parameters(), lr=config["lr"],
                           betas=(config["beta1"], config["beta2"]), eps=config["eps"])
    loss_fn = torch.nn.CrossEntropyLoss()
    batch = config["batch"]
    model.train()
    for step in range(1, config["steps"] + 1):
        first = (step - 1) * batch
        opt.zero_grad()
        before_step(step)
        loss = loss_fn(model(x[first:first + batch]), y[first:first + batch])
        loss.backward()
        opt.step()
        on_step(step, loss.item())


def module_error(state, exact):
    """The worst tensor's max |a - b| over the largest |exact| of its module."""
    scale = {}
    for name, v in exact.items():
        if v.dtype.is_floating_point:
            module = name.rsplit(".", 1)[0]
            scale[module] = max(scale.get(module, 0.0), v.abs().max().item())
    worst = 0.0
    for name, v in exact.items():
        if v.dtype.is_floating_point:
            diff = (state[name].double() - v).abs().max().item()
            worst = max(worst, diff / max(scale[name.rsplit(".", 1)[0]], 1e-300))
    return worst


def split_states(states):
    """The float tensors of float64 states as float32 pairs hi, lo (hi + lo = v)."""
    out = {}
    for step, state in enumerate(states, start=1):
        for name, v in state.items():
            if not v.dtype.is_floating_point:
                continue
            exact = v.numpy()
            hi = exact.astype(np.float32)
            out[f"{step}/{name}"] = hi
            out[f"{step}/{name}@lo"] = (exact - hi.astype(np.float64)).astype(np.float32)
    return out


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: torch_steps.py IN_DIR OUT_DIR")
    in_dir, out_dir = argv
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    with open(os.path.join(in_dir, "config.json")) as f:
        config = json.load(f)
    init = xwt.read(os.path.join(in_dir, "init.xwt"))
    data = xwt.read(os.path.join(in_dir, "data.xwt"))
    models = torch_models()

    def build(dtype):
        model = models.build(config["arch"], tuple(config["in_shape"]), config["num_classes"],
                             config["width"], None, dropout=0.0)
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()}, strict=True)
        return model.to(dtype)

    relus = Relus(torch.nn.functional.relu)
    torch.nn.functional.relu = relus

    model = build(torch.float32)
    x_test = torch.from_numpy(data["x_test"])
    logits = {}
    model.eval()
    with torch.no_grad():
        logits["init"] = model(x_test).numpy().copy()
    states, relu_inputs = [], {}  # float32 states and ReLU inputs, by step
    train(model, config, data, torch.float32,
          lambda step, loss: states.append((state_of(model), loss)),
          lambda step: relus.begin(record=relu_inputs.setdefault(step, [])))
    relus.begin()
    model.eval()
    with torch.no_grad():
        logits["final"] = model(x_test).numpy().copy()

    exact, changed = [], []  # float64 states after each step, decisions forced
    model64 = build(torch.float64)

    def after64(step, loss):
        exact.append(state_of(model64))
        changed.append(relus.changed)

    train(model64, config, data, torch.float64, after64,
          lambda step: relus.begin(force=relu_inputs[step]))
    relus.begin()

    steps, errors = {}, []
    for step, (state, loss) in enumerate(states, start=1):
        errors.append(module_error(state, exact[step - 1]))
        print(f"step {step} loss {loss:.8g} float32 vs float64 {errors[-1]:.3e} "
              f"({len(relu_inputs[step])} ReLU calls, float64 decisions forced to "
              f"float32's: {changed[step - 1]})", flush=True)
        for name, value in state.items():
            steps[f"{step}/{name}"] = value.numpy()
    logits["reference_error"] = np.array(errors, dtype=np.float32)
    xwt.write(os.path.join(out_dir, "steps.xwt"), steps)
    xwt.write(os.path.join(out_dir, "float64.xwt"), split_states(exact))
    xwt.write(os.path.join(out_dir, "logits.xwt"), logits)
    xwt.write(os.path.join(out_dir, "relu.xwt"),
              {f"{step}/{i}": z.numpy() for step, calls in relu_inputs.items()
               for i, z in enumerate(calls)})


if __name__ == "__main__":
    main(sys.argv[1:])
