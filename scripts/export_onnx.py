#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Exports torchvision classification models to ONNX for Swapscope's importer.

Structure only (export_params=False): the files hold the graph, not the weights, so they stay
small. Batch normalization and dropout are kept as they train: the model is put in train mode and
exported with TrainingMode.PRESERVE; stochastic-depth modules are put in eval mode (they are the
identity there, as Swapscope has no such layer). The batch dimension is symbolic.

Beside the files, models.json records for each model its input shape, its parameter count and
its conv + linear multiply-accumulates per sample (counted with forward hooks), which the
importer's tests compare with the analyzer.

With --numerics it also writes a small CNN WITH its weights that uses every layer kind the
importer adds (clip, sigmoid, hardsigmoid, hardswish, mul), and reference tensors from PyTorch:
the input, labels, output logits, loss, the input's gradient, every parameter gradient and the
weights after one SGD step (plain SGD, no momentum, no weight decay), as JSON.

Needs python3-torch and python3-torchvision (PyTorch 1.13); the test suite does not.

    /usr/bin/python3 scripts/export_onnx.py --out tests/data/onnx            # the torchvision models
    /usr/bin/python3 scripts/export_onnx.py --out tests/data/onnx --numerics # the small CNN and its references
"""
import argparse
import json
import os

import torch
import torch.nn as nn
import torchvision
from torch.onnx import TrainingMode

# name -> (constructor keyword arguments, input shape C,H,W)
MODELS = {
    "alexnet": ({}, (3, 224, 224)),
    "vgg16": ({}, (3, 224, 224)),
    "resnet50": ({}, (3, 224, 224)),
    "googlenet": ({"aux_logits": False, "init_weights": False}, (3, 224, 224)),
    "densenet121": ({}, (3, 224, 224)),
    "squeezenet1_0": ({}, (3, 224, 224)),
    "mobilenet_v2": ({}, (3, 224, 224)),
    "mobilenet_v3_small": ({}, (3, 224, 224)),
    "efficientnet_b0": ({}, (3, 224, 224)),
    "shufflenet_v2_x1_0": ({}, (3, 224, 224)),
}
OPSET = 14  # the first with HardSwish


def count_macs(model, shape):
    """Conv and linear multiply-accumulates per sample of one forward pass."""
    macs = [0]

    def conv_hook(m, inp, out):
        k = m.kernel_size[0] * m.kernel_size[1]
        macs[0] += out[0].numel() * (m.in_channels // m.groups) * k

    def linear_hook(m, inp, out):
        macs[0] += m.in_features * m.out_features

    hooks = []
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            hooks.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, nn.Linear):
            hooks.append(m.register_forward_hook(linear_hook))
    was_training = model.training
    model.eval()
    with torch.no_grad():
        model(torch.zeros((1,) + tuple(shape)))
    model.train(was_training)
    for h in hooks:
        h.remove()
    return macs[0]


def prepare_for_export(model):
    model.train()
    for m in model.modules():
        if type(m).__name__ == "StochasticDepth":
            m.eval()
    return model


def export(model, shape, path, export_params):
    torch.onnx.export(
        model,
        torch.zeros((2,) + tuple(shape)),
        path,
        export_params=export_params,
        training=TrainingMode.PRESERVE,
        do_constant_folding=False,
        opset_version=OPSET,
        input_names=["input"],
        output_names=["logits"],
        dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
    )


def export_zoo(out):
    record = {}
    for name, (kwargs, shape) in MODELS.items():
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None, **kwargs)
        macs = count_macs(model, shape)
        params = sum(p.numel() for p in model.parameters())
        export(prepare_for_export(model), shape, os.path.join(out, name + ".onnx"), False)
        record[name] = {"input": list(shape), "params": params, "macs": macs}
        print(f"{name}: {params} parameters, {macs} MACs")
    with open(os.path.join(out, "models.json"), "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")


class SmallCnn(nn.Module):
    """Every layer kind the importer adds: ReLU6 (Clip 0..6), a general Clip,
    Sigmoid, Hardsigmoid, Hardswish, SiLU (Sigmoid and a same-shape Mul) and squeeze-and-excitation
    (GlobalAveragePool, a channel-broadcast Mul). Its padding is the convolutions' own: PyTorch
    1.13 computes a Pad's pads with a subgraph (Shape, ConstantOfShape, Reshape, Slice), which
    does not map; the importer's Pad folding is tested on graphs that give them as a constant."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=1, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.act1 = nn.ReLU6()
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, groups=4, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.act2 = nn.Hardswish()
        self.se_pool = nn.AdaptiveAvgPool2d(1)
        self.se_fc1 = nn.Conv2d(8, 4, 1)
        self.se_act = nn.SiLU()
        self.se_fc2 = nn.Conv2d(4, 8, 1)
        self.se_gate = nn.Hardsigmoid()
        self.conv3 = nn.Conv2d(8, 6, 3, stride=2, padding=1)
        self.sig = nn.Sigmoid()
        self.fc = nn.Linear(6 * 4 * 4, 5)

    def forward(self, x):
        x = self.act1(self.bn1(self.conv1(x)))
        x = self.act2(self.bn2(self.conv2(x)))
        s = self.se_gate(self.se_fc2(self.se_act(self.se_fc1(self.se_pool(x)))))
        x = x * s
        x = torch.clamp(self.conv3(x), -0.5, 0.75)
        x = self.sig(x) * x
        return self.fc(torch.flatten(x, 1))


def export_numerics(out):
    torch.manual_seed(7)
    model = SmallCnn()
    with torch.no_grad():  # BN affine parameters away from 1 and 0, so that they matter
        for bn in (model.bn1, model.bn2):
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.2, 0.2)
    model.train()
    shape = (3, 8, 8)
    x = torch.randn((4,) + shape, requires_grad=True)
    labels = torch.tensor([0, 3, 1, 4])
    export(model, shape, os.path.join(out, "small_cnn.onnx"), True)
    names = [n for n, _ in model.named_parameters()]
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, labels)
    loss.backward()
    lr = 0.1
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    opt.step()
    flat = lambda t: [float(v) for v in t.detach().reshape(-1)]
    ref = {
        "input_shape": list(x.shape),
        "input": flat(x),
        "labels": labels.tolist(),
        "logits": flat(logits),
        "loss": float(loss),
        "input_grad": flat(x.grad),
        "lr": lr,
        "params": {n: {"shape": list(before[n].shape), "before": flat(before[n]),
                       "grad": flat(p.grad), "after": flat(p)}
                   for n, p in model.named_parameters()},
        "param_order": names,
    }
    with open(os.path.join(out, "small_cnn.json"), "w") as f:
        json.dump(ref, f)
        f.write("\n")
    print("small_cnn:", sum(p.numel() for p in model.parameters()), "parameters, loss", float(loss))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", required=True, help="directory for the .onnx files and models.json")
    p.add_argument("--numerics", action="store_true", help="the small CNN with weights instead")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.numerics:
        export_numerics(args.out)
    else:
        export_zoo(args.out)


if __name__ == "__main__":
    main()
