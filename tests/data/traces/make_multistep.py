#!/usr/bin/env python3
"""Write synthetic-a100-3steps.json: a torch.profiler Chrome trace of three
training steps, in the shape Kineto's exporter writes (libkineto
output_json.cpp, CuptiActivity.cpp), with invented durations.

It is what `schedule(wait=1, warmup=1, active=3)` with `prof.step()` after
every training step leaves: the active steps ProfilerStep#2..#4 as host
spans (cat user_annotation) and GPU-side spans (gpu_user_annotation), ATen
ops (cpu_op) and Python frames (python_function) on the host, each kernel's
launch (cuda_runtime cudaLaunchKernel / cudaMemcpyAsync / cudaMemsetAsync,
args.correlation) and the kernel, copy or fill itself (kernel, gpu_memcpy,
gpu_memset, args.correlation/device/stream, ...), flow arrows (ac2g),
metadata events and deviceProperties.

Host and GPU are simulated: the host spends a few microseconds per op, the
GPU runs each kernel after its launch and the previous kernel; the loss is
read back (loss.item(): cudaMemcpyAsync DtoH + cudaStreamSynchronize) after
the forward pass, so backward and optimizer kernels queue up and the last
ones run while the host is already inside the next step's span: only their
correlation id puts them in the right step. The first active step runs its
kernels 1.5x longer (a slow first step), the third 1.1x: the median step is
the third, and no figure is the sum or the mean of the steps. A DtoH copy
launched after the last step's span belongs to no step.

Run from the repository root:  python3 tests/data/traces/make_multistep.py
"""

import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "synthetic-a100-3steps.json")
PID, TID, STREAM = 4242, 4242, 7

# (cpu op, runtime call, GPU cat, GPU name, GPU duration in us at factor 1).
# Names as PyTorch 2.x prints them on an A100 with AMP fp16.
MEMCPY_H2D = ("aten::copy_", "cudaMemcpyAsync", "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 3)
FORWARD = [
    ("aten::embedding", "cudaLaunchKernel", "kernel",
     "void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, unsigned int, 2, 2, -2, true>"
     "(at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<float const, unsigned int>, "
     "at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)", 6),
    ("aten::add", "cudaLaunchKernel", "kernel",
     "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >"
     "(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)", 5),
    ("aten::native_layer_norm", "cudaLaunchKernel", "kernel",
     "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>"
     "(int, float, float const*, float const*, float const*, float*, float*, float*)", 7),
    ("aten::_to_copy", "cudaLaunchKernel", "kernel",
     "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)"
     "::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, "
     "TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, "
     "at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}"
     "::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, "
     "TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, "
     "at::native::memory::StoreWithCast<1>)", 4),
    ("aten::addmm", "cudaLaunchKernel", "kernel", "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn", 20),
    ("aten::bmm", "cudaLaunchKernel", "kernel",
     "void cutlass::Kernel2<cutlass_80_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_tn_align8>"
     "(cutlass_80_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_tn_align8::Params)", 8),
    ("aten::_softmax", "cudaLaunchKernel", "kernel",
     "void (anonymous namespace)::softmax_warp_forward<c10::Half, c10::Half, float, 4, false, false>"
     "(c10::Half*, c10::Half const*, int, int, int, bool const*, int, bool)", 6),
    ("aten::native_dropout", "cudaLaunchKernel", "kernel",
     "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<c10::Half, float, unsigned int, 1, 4, bool>"
     "(at::cuda::detail::TensorInfo<c10::Half const, unsigned int>, at::cuda::detail::TensorInfo<c10::Half, unsigned int>, "
     "at::cuda::detail::TensorInfo<bool, unsigned int>, unsigned int, float, at::PhiloxCudaState)", 5),
    ("aten::clone", "cudaLaunchKernel", "kernel",
     "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda("
     "at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::Half)#1}>"
     "(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
     "const::{lambda()#12}::operator()() const::{lambda(c10::Half)#1} const&)::{lambda(int)#1}>(int, "
     "at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}"
     "::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::Half)#1}>(at::TensorIteratorBase&, "
     "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}"
     "::operator()() const::{lambda(c10::Half)#1} const&)::{lambda(int)#1})", 5),
    ("aten::addmm", "cudaLaunchKernel", "kernel",
     "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel", 18),
    ("aten::gelu", "cudaLaunchKernel", "kernel",
     "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
     "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half)#1}, "
     "at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)"
     "::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half)#1}, at::detail::Array<char*, 2>)", 5),
    ("aten::_log_softmax", "cudaLaunchKernel", "kernel",
     "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
     "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)", 3),
    ("aten::nll_loss_forward", "cudaLaunchKernel", "kernel",
     "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>"
     "(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)", 3),
]
BACKWARD = [
    ("aten::_softmax_backward_data", "cudaLaunchKernel", "kernel",
     "void (anonymous namespace)::softmax_warp_backward<c10::Half, c10::Half, float, 4, false, false>"
     "(c10::Half*, c10::Half const*, c10::Half const*, int, int, int, bool const*)", 6),
    ("aten::mm", "cudaLaunchKernel", "kernel", "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", 20),
    ("aten::mm", "cudaLaunchKernel", "kernel", "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nt", 22),
    ("aten::sum", "cudaLaunchKernel", "kernel",
     "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
     "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
     "unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
     "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
     "unsigned int, float, 4>)", 6),
    ("aten::native_layer_norm_backward", "cudaLaunchKernel", "kernel",
     "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<float, float>"
     "(float const*, float const*, float const*, float const*, float const*, float*, int)", 8),
    ("aten::native_layer_norm_backward", "cudaLaunchKernel", "kernel",
     "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel_32x32<float, float>"
     "(long, long, float const*, float const*, float const*, float const*, float*, float*)", 6),
    ("aten::embedding_dense_backward", "cudaLaunchKernel", "kernel",
     "void at::native::(anonymous namespace)::embedding_backward_feature_kernel<float, float, long>"
     "(long const*, float const*, float*, int, long, int)", 9),
]
OPTIMIZER = [
    ("aten::_fused_adamw_", "cudaLaunchKernel", "kernel",
     "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, "
     "at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, "
     "double, double, double, double, bool, double*, double*>(at::native::(anonymous namespace)::TensorListMetadata<4>, "
     "at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, "
     "double, double, double, double, bool, double*, double*)", 30),
    ("aten::zero_", "cudaMemsetAsync", "gpu_memset", "Memset (Device)", 2),
]
FACTORS = {2: 1.5, 3: 1.0, 4: 1.1}
HOST_OP_US = 6.0     # host time of one ATen op
LAUNCH_AT_US = 2.0   # its runtime call, this far into the op
LAUNCH_US = 3.0
LAUNCH_LATENCY_US = 4.0
CBID = {"cudaLaunchKernel": 211, "cudaMemcpyAsync": 41, "cudaMemsetAsync": 51}


class Sim:
    def __init__(self):
        self.events, self.host, self.gpu, self.corr, self.ext = [], 5000.0, 0.0, 100, 1
        self.step_gpu = []  # (start, end) of the current step's GPU events

    def op(self, spec, factor):
        cpu_name, call, cat, name, dur = spec
        self.corr += 1
        self.ext += 1
        t = self.host
        self.events.append({"ph": "X", "cat": "cpu_op", "name": cpu_name, "pid": PID, "tid": TID,
                            "ts": round(t, 3), "dur": HOST_OP_US,
                            "args": {"External id": self.ext, "Record function id": 0, "Ev Idx": self.ext}})
        launch = t + LAUNCH_AT_US
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": call, "pid": PID, "tid": TID,
                            "ts": round(launch, 3), "dur": LAUNCH_US,
                            "args": {"External id": self.ext, "cbid": CBID[call], "correlation": self.corr}})
        start = max(launch + LAUNCH_LATENCY_US, self.gpu)
        d = round(dur * factor, 3)
        args = {"External id": self.ext}
        if cat == "kernel":
            args.update({"queued": 0, "device": 0, "context": 1, "stream": STREAM, "correlation": self.corr,
                         "registers per thread": 64, "shared memory": 0, "blocks per SM": 1.0,
                         "warps per SM": 8.0, "grid": [108, 1, 1], "block": [256, 1, 1],
                         "est. achieved occupancy %": 25})
        else:
            args.update({"device": 0, "context": 1, "stream": STREAM, "correlation": self.corr,
                         "bytes": 65536, "memory bandwidth (GB/s)": round(65536 / (d * 1e3), 3)})
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": STREAM,
                            "ts": round(start, 3), "dur": d, "args": args})
        self.events.append({"ph": "s", "id": self.corr, "pid": PID, "tid": TID, "ts": round(launch, 3),
                            "cat": "ac2g", "name": "ac2g"})
        self.events.append({"ph": "f", "id": self.corr, "pid": 0, "tid": STREAM, "ts": round(start, 3),
                            "cat": "ac2g", "name": "ac2g", "bp": "e"})
        self.gpu = start + d
        self.step_gpu.append((start, start + d))
        self.host = t + HOST_OP_US + 0.5

    def sync(self):
        """loss.item(): a DtoH copy, then the host waits for the GPU."""
        self.op(("aten::_local_scalar_dense", "cudaMemcpyAsync", "gpu_memcpy",
                 "Memcpy DtoH (Device -> Pageable)", 1), 1.0)
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": PID,
                            "tid": TID, "ts": round(self.host, 3), "dur": round(max(self.gpu - self.host, 0) + 1, 3),
                            "args": {"cbid": 131, "correlation": self.corr + 1000}})
        self.host = max(self.host, self.gpu) + 1.5


def main():
    sim = Sim()
    steps = []
    for step, factor in FACTORS.items():
        begin = sim.host
        sim.step_gpu = []
        sim.events.append({"ph": "X", "cat": "python_function", "name": "train.py(57): train_step", "pid": PID,
                           "tid": TID, "ts": round(begin + 0.2, 3), "dur": 1.0,
                           "args": {"Python parent id": 1, "Python id": step}})
        sim.op(MEMCPY_H2D, factor)
        for spec in FORWARD:
            sim.op(spec, factor)
        sim.sync()
        for spec in BACKWARD + OPTIMIZER:
            sim.op(spec, factor)
        end = sim.host + 2.0
        steps.append((step, begin, end, min(s for s, _ in sim.step_gpu), max(e for _, e in sim.step_gpu)))
        sim.host = end
    # the readback after the last prof.step(), once the script has done
    # other host work: launched outside every step, run after them
    sim.host += 100.0
    sim.op(("aten::_local_scalar_dense", "cudaMemcpyAsync", "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 1), 1.0)
    spans = []
    for i, (step, begin, end, g0, g1) in enumerate(steps):
        spans.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": PID, "tid": TID,
                      "ts": round(begin, 3), "dur": round(end - begin, 3),
                      "args": {"External id": 1000 + i, "Record function id": 0, "Ev Idx": 1000 + i}})
        # Kineto's GPU-side copy of a user annotation spans the GPU work it launched
        spans.append({"ph": "X", "cat": "gpu_user_annotation", "name": f"ProfilerStep#{step}", "pid": 0,
                      "tid": STREAM, "ts": round(g0 - 0.001, 3), "dur": round(g1 - g0 + 0.002, 3),
                      "args": {"External id": 1000 + i}})
    meta = [
        {"name": "process_name", "ph": "M", "ts": 4900.0, "pid": PID, "tid": 0, "args": {"name": "python3"}},
        {"name": "process_name", "ph": "M", "ts": 4900.0, "pid": 0, "tid": 0, "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": 4900.0, "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
        {"name": "thread_name", "ph": "M", "ts": 4900.0, "pid": 0, "tid": STREAM, "args": {"name": "stream 7"}},
        {"name": "thread_name", "ph": "M", "ts": 4900.0, "pid": PID, "tid": TID, "args": {"name": "thread 4242 (python3)"}},
    ]
    tail = [
        {"ph": "X", "cat": "Trace", "ts": 4950.0, "dur": round(sim.host - 4950.0 + 50, 3), "pid": "Spans",
         "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
        {"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces",
         "tid": "Trace PyTorch Profiler", "ts": 4950.0},
        {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": round(sim.host + 60, 3)},
    ]
    doc = {
        "schemaVersion": 1,
        "deviceProperties": [{
            "id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85100068864,
            "computeMajor": 8, "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
            "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
            "sharedMemPerMultiprocessor": 167936, "numSms": 108, "sharedMemPerBlockOptin": 166912}],
        "record_shapes": 0,
        "with_stack": 0,
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": 1700000000000000000,
        "traceEvents": meta + spans + sim.events + tail,
        "traceName": "synthetic-a100-3steps.json",
    }
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    for step, begin, end, g0, g1 in steps:
        print(f"ProfilerStep#{step}: host {begin:.3f}..{end:.3f} ({end - begin:.3f} us), "
              f"GPU {g0:.3f}..{g1:.3f}")


if __name__ == "__main__":
    main()
