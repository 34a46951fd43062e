#!/usr/bin/env node
// TensorFlow.js reference runner of `xwires conformance` (api/conformance.h).
//
// Builds simple_cnn, resnet20 or vgg11 from TensorFlow.js 4.22.0's Keras
// layers (tf.layers, channels-last, 'same' convolutions with TF's padding,
// BatchNormalization(momentum 0.99, epsilon 1e-3), softmax output and
// sparse categorical cross-entropy) with exactly the graph of
// trainers/architectures.cc, loads xwires' initial weights, trains
// config.steps Adam steps (tf.train.adam) on the given batches in order with
// model.trainOnBatch, and writes every weight and moving statistic after
// each step in xwires' layouts (OIHW convolutions, [out, in] dense, the
// first dense after a flatten with its inputs in C, H, W order).
// Runs on the pure-JS CPU backend, the one every machine has, with its
// filter-gradient kernel's memory access sped up (fast_filter_grad.js: the
// same loops and roundings, checked bit for bit against the original).
//
// Usage: node tfjs_steps.js IN_DIR OUT_DIR
//   IN_DIR: config.json, init.xwt, data.xwt (x_train NCHW, y_train)
//   OUT_DIR/steps.xwt: "<step>/<state_dict name>" for step 1..steps
//   OUT_DIR/relu.xwt: "<step>/<call>", the input of every ReLU call of each
//     step's training forward pass, in call order, channels-first (NCHW, or
//     [N, features] after a dense layer): xwires takes these decisions at
//     inputs within rounding of zero (api/conformance_shadow.h). Recorded by
//     wrapping the CPU backend's Relu kernel; a dense layer with a ReLU is
//     built as a linear dense layer and a separate 'relu' activation layer,
//     because Dense's fused matmul applies its ReLU outside the kernel
//     registry (the same bits: the fused kernel applies the same relu to the
//     same rounded matmul + bias). TF.js's ReLU gradient masks with x > 0,
//     the recorded input, as the forward pass does.
'use strict';
const fs = require('fs');
const path = require('path');
const tf = require('@tensorflow/tfjs');
const xwt = require('./xwt');
const fastFilterGrad = require('./fast_filter_grad');

function scaled(c, width) {  // Python's round (half to even), at least 1
  const x = c * width;
  let r = Math.round(x);
  if (Math.abs(x - Math.trunc(x)) === 0.5) r = 2 * Math.round(x / 2);
  return Math.max(1, r);
}

// Layers with the xwires names of their weights, and how to convert them.
class Builder {
  constructor() { this.entries = []; }
  layerName(name) { return name.replace(/\./g, '_'); }
  conv(x, name, filters, kernel, stride, bias) {
    const layer = tf.layers.conv2d({
      filters, kernelSize: kernel, strides: stride, padding: 'same', useBias: bias,
      name: this.layerName(name),
    });
    this.entries.push({name, layer, kind: 'conv', bias});
    return layer.apply(x);
  }
  bn(x, name) {
    const layer = tf.layers.batchNormalization(
        {axis: -1, momentum: 0.99, epsilon: 1e-3, name: this.layerName(name)});
    this.entries.push({name, layer, kind: 'bn'});
    return layer.apply(x);
  }
  // flat: {c, h, w} when x is a flattened channels-last map.
  dense(x, name, units, activation, flat) {
    const fusedRelu = activation === 'relu';  // see relu.xwt above
    const layer = tf.layers.dense(
        {units, activation: fusedRelu ? 'linear' : activation, name: this.layerName(name)});
    this.entries.push({name, layer, kind: 'dense', flat});
    return fusedRelu ? relu(layer.apply(x)) : layer.apply(x);
  }
}

const relu = (x) => tf.layers.activation({activation: 'relu'}).apply(x);
const pool = (x) => tf.layers.maxPooling2d({poolSize: 2, strides: 2}).apply(x);

function simpleCnn(b, x, [c, h, w], width, classes) {
  const c1 = scaled(32, width), c2 = scaled(64, width), hid = scaled(128, width);
  x = pool(relu(b.bn(b.conv(x, 'conv1', c1, 3, 1, false), 'bn1')));
  x = pool(relu(b.bn(b.conv(x, 'conv2', c2, 3, 1, false), 'bn2')));
  x = tf.layers.flatten().apply(x);
  const flat = {c: c2, h: Math.floor(h / 4), w: Math.floor(w / 4)};
  x = b.dense(x, 'fc1', hid, 'relu', flat);
  return b.dense(x, 'fc2', classes, 'softmax');
}

// torchvision BasicBlocks with projection shortcuts (1x1 conv + BN).
function resnet20(b, x, shape, width, classes) {
  const planes = [16, 32, 64].map((p) => scaled(p, width));
  x = relu(b.bn(b.conv(x, 'conv1', planes[0], 3, 1, false), 'bn1'));
  let inplanes = planes[0];
  for (let k = 0; k < 3; ++k) {
    for (let i = 0; i < 3; ++i) {
      const stride = k > 0 && i === 0 ? 2 : 1;
      const p = `layer${k + 1}.${i}.`;
      let y = relu(b.bn(b.conv(x, p + 'conv1', planes[k], 3, stride, false), p + 'bn1'));
      y = b.bn(b.conv(y, p + 'conv2', planes[k], 3, 1, false), p + 'bn2');
      let s = x;
      if (stride !== 1 || inplanes !== planes[k]) {
        s = b.bn(b.conv(x, p + 'downsample.0', planes[k], 1, stride, false), p + 'downsample.1');
      }
      x = relu(tf.layers.add().apply([y, s]));
      inplanes = planes[k];
    }
  }
  x = tf.layers.globalAveragePooling2d({}).apply(x);
  return b.dense(x, 'fc', classes, 'softmax');
}

// torchvision VGG-11 (config A, no BN) without dropout; names count the
// ReLU and pool modules as torchvision's features.N do.
function vgg11(b, x, [c, h, w], width, classes) {
  const cfg = [64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0];
  let index = 0, channels = c;
  for (const v of cfg) {
    if (v === 0) {
      x = pool(x);
      h = Math.floor(h / 2);
      w = Math.floor(w / 2);
      index += 1;
    } else {
      channels = scaled(v, width);
      x = relu(b.conv(x, `features.${index}`, channels, 3, 1, true));
      index += 2;
    }
  }
  x = tf.layers.flatten().apply(x);
  const hid = scaled(4096, width);
  x = b.dense(x, 'classifier.0', hid, 'relu', {c: channels, h, w});
  x = b.dense(x, 'classifier.3', hid, 'relu');
  return b.dense(x, 'classifier.6', classes, 'softmax');
}

const kArchs = {simple_cnn: simpleCnn, resnet20, vgg11};

// A recorded NHWC input as NCHW (2-D [N, features] as it is).
function channelsFirst({values, shape}) {
  if (shape.length !== 4) return {shape, data: values};
  const [n, h, w, c] = shape;
  const data = tf.tidy(() => tf.tensor(values, shape).transpose([0, 3, 1, 2]).dataSync());
  return {shape: [n, c, h, w], data};
}

// Wraps the CPU backend's Relu kernel: while `calls` is an array, each call
// appends a copy of its input (as laid out, NHWC) before computing what it
// always does.
function installReluRecorder() {
  const recorder = {calls: null};
  const original = tf.getKernel('Relu', 'cpu');
  tf.unregisterKernel('Relu', 'cpu');
  tf.registerKernel({...original, kernelFunc: (args) => {
    if (recorder.calls) {
      const x = args.inputs.x;
      const values = Float32Array.from(args.backend.data.get(x.dataId).values);
      recorder.calls.push({values, shape: x.shape});
    }
    return original.kernelFunc(args);
  }});
  return recorder;
}

// xwires layout -> TF.js layout, and back (pure permutations).
function denseIn(t, flat) {  // [out, in] -> [in, out]
  if (!flat) return t.transpose();
  const out = t.shape[0];
  return t.reshape([out, flat.c, flat.h, flat.w]).transpose([2, 3, 1, 0])
      .reshape([flat.h * flat.w * flat.c, out]);
}
function denseOut(t, flat) {  // [in, out] -> [out, in]
  if (!flat) return t.transpose();
  const out = t.shape[1];
  return t.reshape([flat.h, flat.w, flat.c, out]).transpose([3, 2, 0, 1])
      .reshape([out, flat.c * flat.h * flat.w]);
}

function suffixes(e) {
  if (e.kind === 'bn') return ['weight', 'bias', 'running_mean', 'running_var'];
  return e.kind === 'conv' && !e.bias ? ['weight'] : ['weight', 'bias'];
}

function loadWeights(entries, init) {
  for (const e of entries) {
    const values = suffixes(e).map((s, i) => {
      const src = init.get(`${e.name}.${s}`);
      if (!src) throw new Error(`init.xwt has no tensor '${e.name}.${s}'`);
      const t = tf.tensor(src.data, src.shape, 'float32');
      if (i > 0) return t;
      return e.kind === 'conv' ? t.transpose([2, 3, 1, 0]) : e.kind === 'dense' ? denseIn(t, e.flat) : t;
    });
    e.layer.setWeights(values);
  }
}

function exportWeights(entries, step, out) {
  for (const e of entries) {
    e.layer.getWeights().forEach((w, i) => {
      let t = w;
      if (i === 0 && e.kind === 'conv') t = w.transpose([3, 2, 0, 1]);
      if (i === 0 && e.kind === 'dense') t = denseOut(w, e.flat);
      out.push({name: `${step}/${e.name}.${suffixes(e)[i]}`, dtype: 0, shape: t.shape,
                data: t.dataSync()});
    });
  }
}

async function main() {
  const [inDir, outDir] = process.argv.slice(2);
  if (!inDir || !outDir) throw new Error('usage: node tfjs_steps.js IN_DIR OUT_DIR');
  await tf.setBackend('cpu');
  fastFilterGrad.install();  // same bits as TF.js's kernel, checked there
  const relus = installReluRecorder();
  const config = JSON.parse(fs.readFileSync(path.join(inDir, 'config.json'), 'utf8'));
  const build = kArchs[config.arch];
  if (!build) throw new Error(`tfjs_steps.js builds no architecture '${config.arch}'`);
  const [c, h, w] = config.in_shape;
  const input = tf.input({shape: [h, w, c]});
  const b = new Builder();
  const model = tf.model({inputs: input, outputs: build(b, input, [c, h, w], config.width,
                                                       config.num_classes)});
  loadWeights(b.entries, xwt.read(path.join(inDir, 'init.xwt')));
  const data = xwt.read(path.join(inDir, 'data.xwt'));
  const xs = data.get('x_train'), ys = data.get('y_train');
  const x = tf.tensor(xs.data, xs.shape, 'float32').transpose([0, 2, 3, 1]);
  const y = tf.tensor(Float32Array.from(ys.data, Number), [ys.shape[0], 1], 'float32');
  const optimizer = tf.train.adam(config.lr, config.beta1, config.beta2, config.eps);
  model.compile({optimizer, loss: 'sparseCategoricalCrossentropy'});
  const out = [], reluInputs = [];
  const batch = config.batch;
  for (let step = 1; step <= config.steps; ++step) {
    const first = (step - 1) * batch;
    const xb = x.slice([first, 0, 0, 0], [batch, h, w, c]);
    const yb = y.slice([first, 0], [batch, 1]);
    relus.calls = [];
    const loss = await model.trainOnBatch(xb, yb);
    relus.calls.forEach(
        (z, i) => reluInputs.push({name: `${step}/${i}`, dtype: 0, ...channelsFirst(z)}));
    process.stdout.write(`step ${step} loss ${loss} (${relus.calls.length} ReLU calls)\n`);
    relus.calls = null;
    exportWeights(b.entries, step, out);
  }
  xwt.write(path.join(outDir, 'steps.xwt'), out);
  xwt.write(path.join(outDir, 'relu.xwt'), reluInputs);
}

main().catch((e) => {
  process.stderr.write(`tfjs_steps.js: ${e.stack || e}\n`);
  process.exit(1);
});
