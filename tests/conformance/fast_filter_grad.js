// TensorFlow.js 4.22.0's CPU Conv2DBackpropFilter, with the same arithmetic
// and a faster memory access.
//
// The CPU backend's kernel (tfjs-backend-cpu conv2DBackpropFilter) reads
// every element through TensorBuffer.get(...varargs), which took 90% of a
// simple_cnn training step. This replacement keeps its loops, their order
// (filter row, column, in channel, out channel; then batch, output row,
// output column), its JS-number (double) accumulator and its single
// rounding to float32 on store, and computes the flat indices directly, so
// its result is the same bits. install() checks that on several shapes
// (strides 1 and 2, 'same' padding with an extra bottom/right pixel, 1x1
// and 3x3 kernels) against the original kernel before replacing it, and
// throws if one element differs.
'use strict';
const tf = require('@tensorflow/tfjs');

function filterGrad(args) {
  const {inputs: {x, dy}, backend, attrs} = args;
  const {strides, pad, dataFormat, dimRoundingMode, filterShape} = attrs;
  const format = tf.backend_util.convertConv2DDataFormat(dataFormat);
  if (format !== 'channelsLast') throw new Error('fast_filter_grad.js: channelsLast only');
  const info = tf.backend_util.computeConv2DInfo(x.shape, filterShape, strides, 1, pad,
                                                 dimRoundingMode, false, format);
  const {strideHeight: sh, strideWidth: sw, filterHeight: fh, filterWidth: fw} = info;
  const {inHeight, inWidth, inChannels: ci, outHeight, outWidth, outChannels: co} = info;
  const top = info.padInfo.top, left = info.padInfo.left;
  const xv = backend.data.get(x.dataId).values, dyv = backend.data.get(dy.dataId).values;
  const dw = new Float32Array(fh * fw * ci * co);
  for (let wR = 0; wR < fh; ++wR) {
    const yRMin = Math.max(0, Math.ceil((top - wR) / sh));
    const yRMax = Math.min(outHeight, (inHeight + top - wR) / sh);
    for (let wC = 0; wC < fw; ++wC) {
      const yCMin = Math.max(0, Math.ceil((left - wC) / sw));
      const yCMax = Math.min(outWidth, (inWidth + left - wC) / sw);
      for (let d1 = 0; d1 < ci; ++d1) {
        for (let d2 = 0; d2 < co; ++d2) {
          let dotProd = 0;
          for (let b = 0; b < info.batchSize; ++b) {
            for (let yR = yRMin; yR < yRMax; ++yR) {
              const xR = wR + yR * sh - top;
              const xRow = (b * inHeight + xR) * inWidth, yRow = (b * outHeight + yR) * outWidth;
              for (let yC = yCMin; yC < yCMax; ++yC) {
                const xC = wC + yC * sw - left;
                dotProd += xv[(xRow + xC) * ci + d1] * dyv[(yRow + yC) * co + d2];
              }
            }
          }
          dw[((wR * fw + wC) * ci + d1) * co + d2] = dotProd;
        }
      }
    }
  }
  return backend.makeTensorInfo(info.filterShape, 'float32', dw);
}

// Both kernels on one case; throws on the first differing element.
function check(original, xShape, filterShape, stride) {
  const [n, h, w] = xShape;
  const oh = Math.ceil(h / stride), ow = Math.ceil(w / stride);
  const x = tf.randomUniform(xShape, -1, 1, 'float32', 1);
  const dy = tf.randomUniform([n, oh, ow, filterShape[3]], -1, 1, 'float32', 2);
  const backend = tf.backend();
  const attrs = {strides: stride, pad: 'same', dataFormat: 'NHWC', dimRoundingMode: undefined,
                 filterShape};
  const a = original({inputs: {x, dy}, backend, attrs});
  const b = filterGrad({inputs: {x, dy}, backend, attrs});
  const av = backend.data.get(a.dataId).values, bv = backend.data.get(b.dataId).values;
  for (let i = 0; i < av.length; ++i) {
    if (!Object.is(av[i], bv[i])) {
      throw new Error(`fast_filter_grad.js differs from TF.js's kernel at ${i} of ` +
                      `${JSON.stringify({xShape, filterShape, stride})}: ${bv[i]} vs ${av[i]}`);
    }
  }
}

function install() {
  const name = 'Conv2DBackpropFilter';
  const original = tf.getKernel(name, 'cpu').kernelFunc;
  check(original, [2, 7, 7, 3], [3, 3, 3, 4], 1);
  check(original, [2, 8, 8, 3], [3, 3, 3, 4], 2);
  check(original, [2, 7, 7, 3], [3, 3, 3, 4], 2);
  check(original, [3, 6, 6, 2], [1, 1, 2, 5], 2);
  tf.unregisterKernel(name, 'cpu');
  tf.registerKernel({kernelName: name, backendName: 'cpu', kernelFunc: filterGrad});
}

module.exports = {install};
