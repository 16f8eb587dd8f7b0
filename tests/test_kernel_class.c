/* test_kernel_class.c — the kernel-name table against real kernel names of
 * cuBLAS, cuBLASLt, CUTLASS, cuDNN, FlashAttention, NCCL, ATen and apex, each
 * with where it was seen (a thread that prints it, or the source that names
 * the __global__ function), and against the substring traps an unanchored
 * match falls into. "code index" marks names found in public repositories'
 * files through a code search that does not name the repository. */
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "kernel_class.h"
#include "op.h"
#include "test_util.h"

typedef struct {
    const char *name;
    int cls;
    const char *source;
} named;

static const named real_names[] = {
    /* cuBLAS / cuBLASLt / CUTLASS GEMMs, Volta to Hopper */
    {"volta_h884gemm_64x128_ldg8_nn", XS_KC_GEMM,
     "Nsight Systems kernel table, V100 fp16 (code index)"},
    {"volta_h884gemm_256x128_ldg8_nn", XS_KC_GEMM, "kernel list of a profiling tool's test (code index)"},
    {"volta_sgemm_32x128_tn", XS_KC_GEMM, "official-stockfish/nnue-pytorch#96 (profiler table)"},
    {"volta_sgemm_128x64_nn", XS_KC_GEMM, "xpusim's earlier test table"},
    {"volta_fp16_s884gemm_fp16_256x128_ldg8_f2f_nn", XS_KC_GEMM,
     "nvprof table of a V100 run (code index)"},
    {"volta_cgemm_32x64_tn", XS_KC_GEMM, "NVIDIA/apex#666 (nvprof)"},
    {"turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_tn", XS_KC_GEMM, "NCU report on a T4 (code index)"},
    {"turing_fp16_s1688gemm_fp16_256x128_ldg8_f2f_stages_32x1_nn", XS_KC_GEMM,
     "ncu on a T4 (code index)"},
    {"turing_fp16_s1688gemm_fp16_128x64_sliced1x2_ldg8_f2f_tn", XS_KC_GEMM,
     "kernel table of a T4 vLLM run (code index)"},
    {"ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", XS_KC_GEMM,
     "xpusim's earlier test table"},
    {"ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_32x3_nn", XS_KC_GEMM,
     "karpathy/nanochat#105 (Perfetto query of a torch.profiler trace)"},
    {"ampere_bf16_s1688gemm_bf16_128x128_ldg8_f2f_stages_32x1_nn", XS_KC_GEMM,
     "pytorch/pytorch#181718, karpathy/nanochat#105"},
    {"ampere_sgemm_128x64_tn", XS_KC_GEMM, "nsys summary of a GPT training run (code index)"},
    {"ampere_sgemm_32x32_sliced1x4_tn", XS_KC_GEMM, "kernel breakdown table (code index)"},
    {"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma", XS_KC_GEMM,
     "pytorch/pytorch#167503 (profiler trace analysis)"},
    {"sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas",
     XS_KC_GEMM, "NVIDIA/TensorRT-LLM#1541"},
    {"void cutlass::Kernel<cutlass_80_tensorop_f16_s16816gemm_relu_f16_64x64_64x4_nn>"
     "(cutlass_80_tensorop_f16_s16816gemm_relu_f16_64x64_64x4_nn::Params)",
     XS_KC_GEMM, "forums.developer.nvidia.com: sm90_xmma_gemm / cutlass::Kernel<cutlass_80_"
                 "tensorop_ to nvjet_tst with CUDA 12.8 (H100 NVL)"},
    {"cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_nn_align8>",
     XS_KC_GEMM, "pytorch/pytorch#181718"},
    {"cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_nn_align1>", XS_KC_GEMM,
     "pytorch/pytorch#181718"},
    {"void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>"
     "(cutlass_80_simt_sgemm_128x256_8x4_nt_align1::Params)",
     XS_KC_GEMM, "pytorch/pytorch#167503"},
    {"void cutlass::Kernel2<cutlass_80_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_tn_align8>"
     "(cutlass_80_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_tn_align8::Params)",
     XS_KC_GEMM, "CUTLASS kernel naming (cutlass_75_wmma_..._16x16_128x2_tn_align8 in a T4 "
                 "kernel table, code index)"},
    {"nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_TNN", XS_KC_GEMM,
     "torch matmul on an H100 under Proton (code index)"},
    {"nvjet_hsh_64x8_64x16_1x1_v_bz_splitK_NNT", XS_KC_GEMM,
     "names from torch.profiler, cuBLAS 12.8 (code index)"},
    {"nvjet_tst_128x24_64x11_2x1_v_bz_TNT", XS_KC_GEMM, "sgl-project/sglang#22353"},
    {"void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, "
     "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, "
     "float> >(cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, "
     "float>, float const*, float const*)",
     XS_KC_GEMM, "official-stockfish/nnue-pytorch#96 (gemv2T_kernel_val<int, int, float...)"},
    {"void gemmSN_TN_kernel<float, 128, 16, 2, 4, 4, 4, true, "
     "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float> >(cublasGemmSmallNParams<"
     "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float>, float>)",
     XS_KC_GEMM, "kernel tables (code index: gemmSN_TN_kernel<float, (int)128, (int)16, ...)"},
    {"void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, false, true, "
     "false>(cublasLt::cublasSplitKParams<float>, float const*, float const*, float*, float const*, "
     "float const*, float const*, float const*, float*, void*, long, float*, int*)",
     XS_KC_GEMM, "names from torch.profiler (code index: cublasLt::splitKreduce_kernel<32, 16, int, "
                 "float, ...>)"},
    {"void splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>"
     "(cublasSplitKParams<float>, float const*, float const*, float*, float const*, "
     "float const*, float const*)",
     XS_KC_GEMM, "cuBLAS split-K reduction (ampere_sgemm + splitKreduce, code index)"},
    {"std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float, float, float, "
     "float, false, true, true, false, 7, false, cublasGemvParamsEx<int, "
     "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float>, float> >(...)",
     XS_KC_GEMM, "cuBLAS gemvx as demangled (return type before the name)"},
    /* fused attention */
    {"void flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::half_t, "
     "Flash_kernel_traits<64, 128, 128, 4, cutlass::half_t> >, false, false, false, false, true, "
     "true, false>(Flash_fwd_params)",
     XS_KC_ATTENTION, "Dao-AILab/flash-attention flash_fwd_kernel.h"},
    {"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, "
     "false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, "
     "cutlass::bfloat16_t> >, false, true, false, false, false, false>(pytorch_flash::"
     "Flash_fwd_params)",
     XS_KC_ATTENTION, "huggingface/blog#3451 (the flash backend's pytorch_flash kernel)"},
    {"void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<pytorch_flash::"
     "Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, cutlass::half_t, "
     "pytorch_flash::Flash_kernel_traits<64, 128, 128, 8, cutlass::half_t> >, false, false, false, "
     "false, false, false>(pytorch_flash::Flash_bwd_params)",
     XS_KC_ATTENTION, "aten/src/ATen/native/transformers/cuda/flash_attn (PyTorch)"},
    {"void flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, "
     "false, cutlass::half_t> >(Flash_bwd_params)",
     XS_KC_ATTENTION, "Dao-AILab/flash-attention flash_bwd_kernel.h"},
    {"fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<"
     "cutlass::half_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
     XS_KC_ATTENTION, "PyTorch mem-efficient attention (kernel_forward.h generated names)"},
    {"fmha_cutlassB_f16_aligned_64x64_k64_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<"
     "cutlass::arch::Sm80, cutlass::half_t, true, false, true, 64, 64, 64, false>::Params)",
     XS_KC_ATTENTION, "PyTorch mem-efficient attention backward (generated names)"},
    {"cudnn_generated_fort_native_sdpa_sm90_knob_26_64x64x128_1x4x1_kernel0_0", XS_KC_ATTENTION,
     "pytorch/kineto#1022 (cuDNN SDPA backward in a torch.profiler trace)"},
    /* collectives */
    {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", XS_KC_COMM, "NCCL 2.x naming"},
    {"ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
     XS_KC_COMM, "apache/tvm#16842 (nsys table)"},
    {"ncclDevKernel_AllGather_RING_LL", XS_KC_COMM,
     "NVIDIA/nccl#2196; kernel table (code index)"},
    {"ncclAllReduceRingLLKernel_sum", XS_KC_COMM,
     "NVIDIA/nccl#536 (ncclAllReduceRingLLKernel_sum)"},
    /* ATen */
    {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
     "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
     "at::detail::Array<char*, 3>)",
     XS_KC_ELEMENTWISE, "pytorch/pytorch#54324 (vectorized_elementwise_kernel<4, ...>)"},
    {"void at::native::unrolled_elementwise_kernel<at::native::MulScalarFunctor<float, float>, "
     "at::detail::Array<char*, 2>, OffsetCalculator<1, unsigned int, false>, "
     "OffsetCalculator<1, unsigned int, false>, at::native::memory::LoadWithoutCast, "
     "at::native::memory::StoreWithoutCast>(int, at::native::MulScalarFunctor<float, float>, "
     "at::detail::Array<char*, 2>, OffsetCalculator<1, unsigned int, false>, "
     "OffsetCalculator<1, unsigned int, false>, at::native::memory::LoadWithoutCast, "
     "at::native::memory::StoreWithoutCast)",
     XS_KC_ELEMENTWISE, "pytorch/pytorch#54324"},
    {"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::"
     "FillFunctor<float> >(at::TensorIteratorBase&, at::native::FillFunctor<float> const&)::"
     "{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::FillFunctor<float> >("
     "at::TensorIteratorBase&, at::native::FillFunctor<float> const&)::{lambda(int)#1})",
     XS_KC_ELEMENTWISE, "ATen Loops.cuh elementwise_kernel (fill_kernel_cuda in nvprof output of "
                        "ryujaehun/pytorch-gpu-benchmark#6)"},
    {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda("
     "at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::"
     "{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, "
     "TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, "
     "at::native::memory::StoreWithCast<1> >(int, ...)",
     XS_KC_COPY, "ATen Copy.cu direct_copy_kernel_cuda (a cast)"},
    {"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::"
     "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::"
     "{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, "
     "...)::{lambda(int)#1}>(int, ...)",
     XS_KC_COPY, "sgl-project/sglang#22353 (a strided copy)"},
    {"void at::native::unrolled_elementwise_kernel<at::native::copy_device_to_device("
     "at::TensorIterator&, bool)::{lambda()#2}::operator()() const::{lambda()#8}::operator()() "
     "const::{lambda(float)#1}, at::detail::Array<char*, 2>, ...>(int, ...)",
     XS_KC_COPY, "pytorch/pytorch#54324 (PyTorch 1.8)"},
    {"void kernelPointwiseApply2<CopyOp<float, float>, float, float, unsigned int, -1, 1>("
     "OffsetInfo<float, unsigned int, -1>, OffsetInfo<float, unsigned int, 1>, unsigned int, "
     "CopyOp<float, float>)",
     XS_KC_COPY, "NVIDIA/apex#666 (THC, PyTorch 1.x)"},
    {"void kernelPointwiseApply2<ThresholdUpdateOutput<at::Half>, at::Half, at::Half, unsigned int, "
     "1, 1>(OffsetInfo<ThresholdUpdateOutput<at::Half>, at::Half, unsigned int>, OffsetInfo<"
     "at::Half, at::Half, 1>, at::Half, at::Half)",
     XS_KC_ELEMENTWISE, "NVIDIA/apex#666"},
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
     "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()("
     "at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >("
     "at::native::ReduceOp<float, ...>)",
     XS_KC_REDUCE, "ATen Reduce.cuh reduce_kernel"},
    {"void (anonymous namespace)::softmax_warp_forward<c10::Half, c10::Half, float, 9, false, "
     "false>(c10::Half*, c10::Half const*, int, int, int, bool const*, int, bool)",
     XS_KC_SOFTMAX, "ATen PersistentSoftmax.cuh softmax_warp_forward"},
    {"void (anonymous namespace)::softmax_warp_backward<float, float, float, 7, false, false>("
     "float*, float const*, float const*, int, int, int, bool const*)",
     XS_KC_SOFTMAX, "ATen PersistentSoftmax.cuh softmax_warp_backward"},
    {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
     "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
     XS_KC_SOFTMAX, "ATen SoftMax.cu cunn_SoftMaxForward"},
    {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
     "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)",
     XS_KC_LOSS, "ATen SoftMax.cu (log_softmax of cross_entropy)"},
    {"void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, "
     "at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(float*, float const*, "
     "float const*, long)",
     XS_KC_LOSS, "ATen SoftMax.cu (log_softmax backward)"},
    {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
     "float, float const*, float const*, float const*, float*, float*, float*)",
     XS_KC_NORM, "pytorch/pytorch#107287 (vectorized_layer_norm)"},
    {"void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<float, float>("
     "float const*, float const*, float const*, float const*, float const*, float*, int)",
     XS_KC_NORM, "pytorch/pytorch#111021"},
    {"void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<float, float>("
     "float const*, float const*, float const*, float const*, float const*, float*, int)",
     XS_KC_NORM, "pytorch/pytorch#111021"},
    {"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel_32x32<float, float>(long, "
     "long, float const*, float const*, float const*, float const*, float*, float*)",
     XS_KC_NORM, "pytorch/pytorch#87814"},
    {"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<float, float, 32u, "
     "32u, 1u, false, true, false>(long, long, float const*, float const*, float const*, "
     "float const*, float*, float*)",
     XS_KC_NORM, "pytorch/pytorch#150625"},
    {"void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, unsigned int, 2, 2, "
     "-2, true>(at::cuda::detail::TensorInfo<float, unsigned int>, ...)",
     XS_KC_EMBED, "ATen Indexing.cu indexSelectLargeIndex (xpusim's earlier test table)"},
    {"void at::native::(anonymous namespace)::indexSelectSmallIndex<c10::Half, long, unsigned int, "
     "2, 2, -2>(...)",
     XS_KC_EMBED, "ATen Indexing.cu indexSelectSmallIndex"},
    {"void at::native::(anonymous namespace)::embedding_backward_feature_kernel<float, float, long>("
     "long const*, float const*, float*, int, long, int)",
     XS_KC_EMBED, "ATen Embedding.cu embedding_backward_feature_kernel"},
    {"void at::native::(anonymous namespace)::compute_grad_weight<float, long>(long const*, "
     "float const*, long const*, long, long, long, long const*, long const*, "
     "at::acc_type<float, true>*, long)",
     XS_KC_EMBED, "ATen EmbeddingBackwardKernel.cu compute_grad_weight"},
    {"void at::native::(anonymous namespace)::sum_and_scatter<float, long>(long const*, float*, "
     "long, long const*, long const*, at::acc_type<float, true> const*, long const*, long const*, "
     "long, long)",
     XS_KC_EMBED, "ATen EmbeddingBackwardKernel.cu sum_and_scatter"},
    {"void at::native::(anonymous namespace)::krn_partials_per_segment<long>(long*, long const*, "
     "long const*, long)",
     XS_KC_EMBED, "ATen EmbeddingBackwardKernel.cu krn_partials_per_segment"},
    {"void at_cuda_detail::cub::DeviceRadixSortOnesweepKernel<at_cuda_detail::cub::"
     "DeviceRadixSortPolicy<long, long, unsigned int>::Policy800, true, false, long, long, unsigned "
     "int, int>(int*, int*, unsigned int*, unsigned int const*, long*, long const*, long*, "
     "long const*, int, int, int)",
     XS_KC_EMBED, "cub radix sort of the token ids in embedding_dense_backward_cuda"},
    {"void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::"
     "(anonymous namespace)::OpaqueType<4u>, unsigned int, 3, 64, 64>(...)",
     XS_KC_COPY, "pytorch/pytorch#102815 (CatArrayBatchedCopy wide loads)"},
    {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous "
     "namespace)::OpaqueType<2u>, unsigned int, 2, 128, 1>(...)",
     XS_KC_COPY, "NVIDIA/TensorRT-LLM#8044, intel/torch-xpu-ops#1764"},
    {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
     "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<"
     "float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, "
     "bool, double*, double*>(...)",
     XS_KC_OPTIMIZER, "ATen fused_adam_utils.cuh (torch.optim.AdamW(fused=True))"},
    {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
     "namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::"
     "UnaryOpScalarListFunctor<float, 1, 1, 0>, ...>(...)",
     XS_KC_OPTIMIZER, "ATen ForeachFunctors.cuh (foreach ops of the optimizer / AMP)"},
    {"void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float, float, "
     "float, float, float, float, adamMode_t, float>(long, int volatile*, TensorListMetadata<4>, "
     "AdamFunctor<float>, float, float, float, float, float, float, adamMode_t, float)",
     XS_KC_OPTIMIZER, "apex multi_tensor_adam.cu (xpusim's earlier test table)"},
    {"void MultiTensorApplyCudaKernel<2, 110, 320, MomentumFunctor<float>, float>(int, "
     "TensorAndBlockInfo<2, 110, 320>, MomentumFunctor<float>, float)",
     XS_KC_OPTIMIZER, "PaddlePaddle multi_tensor_apply.h (code index)"},
    {"void at::native::(anonymous namespace)::fused_dropout_kernel_vec<c10::Half, float, unsigned "
     "int, 1, 4, bool>(at::cuda::detail::TensorInfo<c10::Half const, unsigned int>, ...)",
     XS_KC_ELEMENTWISE, "ATen Dropout.cu fused_dropout_kernel_vec"},
    {"void at::native::_GLOBAL__N__54_tmpxft_00008e93_00000000_11_Dropout_compute_75_cpp1_ii_"
     "275f3a05::fused_dropout_kernel<float, float, unsigned int>(...)",
     XS_KC_ELEMENTWISE, "ryujaehun/pytorch-gpu-benchmark#6 (nvprof, PyTorch 1.x)"},
    {"void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, "
     "long>(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)",
     XS_KC_LOSS, "ATen Loss.cu"},
    {"void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, long>("
     "float*, float const*, long const*, float const*, float const*, bool, int, int, long, long)",
     XS_KC_LOSS, "ATen Loss.cu"},
    {"Memcpy DtoD (Device -> Device)", XS_KC_COPY, "Kineto CuptiActivity.cpp memcpyName()"},
    {"Memcpy HtoD (Pageable -> Device)", XS_KC_OTHER, "Kineto CuptiActivity.cpp memcpyName()"},
    {"Memcpy DtoH (Device -> Pinned)", XS_KC_OTHER, "Kineto CuptiActivity.cpp memcpyName()"},
    {"Memset (Device)", XS_KC_ELEMENTWISE, "Kineto CuptiActivity.cpp (Memset ({memory kind}))"},
    /* apex */
    {"void cuApplyLayerNorm<c10::Half, float, c10::Half>(c10::Half*, float*, float*, "
     "c10::Half const*, int, int, float, c10::Half const*, c10::Half const*)",
     XS_KC_NORM, "NVIDIA/apex#69 (fused layer norm), layer_norm_cuda_kernel.cu"},
    {"void cuComputeGradInput<c10::Half, float, c10::Half>(c10::Half const*, c10::Half const*, "
     "int, int, float const*, float const*, float, c10::Half const*, c10::Half*)",
     XS_KC_NORM, "apex layer_norm_cuda_kernel.cu (xpusim's earlier test table)"},
    {"void cuComputePartGradGammaBeta<c10::Half, float, c10::Half>(...)", XS_KC_NORM,
     "pytorch/pytorch#179019 (cuComputePartGradGammaBeta, cuComputeGradGammaBeta)"},
    {"void cuComputeGradGammaBeta<float, c10::Half>(...)", XS_KC_NORM, "pytorch/pytorch#179019"},
    /* not in the model: reported as other, never pulled into a costed class */
    {"volta_fp16_s884cudnn_fp16_256x128_ldg8_relu_f2f_exp_small_nhwc2nchw_tn_v1", XS_KC_OTHER,
     "NVIDIA/apex#666 (cuDNN convolution)"},
    {"turing_fp16_s1688cudnn_fp16_256x64_sliced1x2_ldg8_relu_f2f_exp_small_nhwc_tn_v1",
     XS_KC_OTHER, "pytorch/pytorch#54324 (cuDNN convolution)"},
    {"void cudnn::detail::implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, true, false, "
     "true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, ...)",
     XS_KC_OTHER, "ryujaehun/pytorch-gpu-benchmark#6 (a convolution, despite 'sgemm')"},
    {"cask_cudnn::computeOffsetsKernel(cask_cudnn::ComputeOffsetsParams)", XS_KC_OTHER,
     "pytorch/pytorch#54324"},
    {"void at::native::batch_norm_transform_input_kernel<c10::Half, c10::Half, float, false, int>("
     "...)",
     XS_KC_OTHER, "pytorch/pytorch#54324 (batch norm: no op of the model)"},
};

static void real_kernel_names_should_map_to_their_class(void)
{
    int wrong = 0;
    for (size_t i = 0; i < sizeof real_names / sizeof *real_names; i++) {
        int got = xs_kclass_of_kernel(real_names[i].name);
        if (got != real_names[i].cls) {
            fprintf(stderr, "\n%s\n  -> %s, expected %s (%s)\n", real_names[i].name,
                    xs_kclass_name(got), xs_kclass_name(real_names[i].cls), real_names[i].source);
            wrong++;
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
}

/* What an unanchored substring match gets wrong: words inside other words,
 * namespaces and functors, lambdas. */
static void substrings_of_other_names_should_not_decide_the_class(void)
{
    static const named traps[] = {
        /* "cat" inside truncate / concat is no concatenation copy */
        {"void at::native::vectorized_elementwise_kernel<4, at::native::trunc_kernel_cuda("
         "at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() "
         "const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, ...)",
         XS_KC_ELEMENTWISE, "trunc"},
        {"void vllm::concat_and_cache_mla_kernel<__nv_bfloat16, __nv_bfloat16, "
         "(vllm::Fp8KVCacheDataType)0>(...)",
         XS_KC_OTHER, "concat"},
        /* a GEMM word in an elementwise functor's namespace or name */
        {"void at::native::vectorized_elementwise_kernel<4, gemm_epilogue::AddBiasFunctor<float>, "
         "at::detail::Array<char*, 3> >(int, gemm_epilogue::AddBiasFunctor<float>, "
         "at::detail::Array<char*, 3>)",
         XS_KC_ELEMENTWISE, "gemm namespace"},
        {"void at::native::unrolled_elementwise_kernel<cublas_gemm_helpers::ScaleOp<float>, "
         "at::detail::Array<char*, 2> >(int, ...)",
         XS_KC_ELEMENTWISE, "cublas/gemm functor"},
        /* 'lambda' holds 'lamb', 'sort' hides in 'resort', 'adam' in a functor namespace */
        {"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
         "ResortFunctor<float>, at::detail::Array<char*, 2> >(int, ...)::{lambda(int)#1}",
         XS_KC_ELEMENTWISE, "resort"},
        {"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<adam_helpers::"
         "Decay<float> >(at::TensorIteratorBase&, ...)::{lambda(int)#1}>(int, ...)",
         XS_KC_ELEMENTWISE, "adam namespace"},
        /* softmax inside another kernel's template argument */
        {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, softmax_stats::"
         "MaxOps<float>, unsigned int, float, 4> >(...)",
         XS_KC_REDUCE, "softmax namespace"},
        /* flash / nccl as a later word: not the kernel's own prefix */
        {"void at::native::vectorized_elementwise_kernel<4, at::native::reset_flash_state<int>, "
         "at::detail::Array<char*, 1> >(int, ...)",
         XS_KC_ELEMENTWISE, "flash functor"},
        {"unknown_kernel_without_rules", XS_KC_OTHER, "no rule"},
        {"", XS_KC_OTHER, "empty"},
    };
    for (size_t i = 0; i < sizeof traps / sizeof *traps; i++) {
        int got = xs_kclass_of_kernel(traps[i].name);
        if (got != traps[i].cls)
            fprintf(stderr, "\ntrap '%s': %s -> %s, expected %s\n", traps[i].source,
                    traps[i].name, xs_kclass_name(got), xs_kclass_name(traps[i].cls));
        CU_ASSERT_EQUAL(got, traps[i].cls);
    }
}

static void every_op_kind_should_have_a_class_the_trace_can_hold(void)
{
    CU_ASSERT_EQUAL(xs_kclass_of_op(XS_OP_GEMM), XS_KC_GEMM);
    CU_ASSERT_EQUAL(xs_kclass_of_op(XS_OP_BGEMM), XS_KC_GEMM);
    CU_ASSERT_EQUAL(xs_kclass_of_op(XS_OP_CAST), XS_KC_COPY);
    CU_ASSERT_EQUAL(xs_kclass_of_op(XS_OP_COMM), XS_KC_COMM);
    CU_ASSERT_EQUAL(xs_kclass_of_op(XS_OP_ELTWISE), XS_KC_ELEMENTWISE);
    for (int k = 0; k < XS_OP_KIND_COUNT; k++) {
        int c = xs_kclass_of_op(k);
        CU_ASSERT(c >= 0 && c < XS_KC_COUNT && c != XS_KC_OTHER);
    }
    CU_ASSERT_STRING_EQUAL(xs_kclass_name(XS_KC_COMM), "comm");
    CU_ASSERT_STRING_EQUAL(xs_kclass_name(XS_KC_OTHER), "other");
    CU_ASSERT_STRING_EQUAL(xs_kclass_name(XS_KC_COUNT), "?");
}

int tu_add_kernel_class_suite(void)
{
    CU_pSuite s = CU_add_suite("kernel_class", NULL, NULL);
    return !s ||
           !CU_add_test(s, "real_kernel_names_should_map_to_their_class",
                        real_kernel_names_should_map_to_their_class) ||
           !CU_add_test(s, "substrings_of_other_names_should_not_decide_the_class",
                        substrings_of_other_names_should_not_decide_the_class) ||
           !CU_add_test(s, "every_op_kind_should_have_a_class_the_trace_can_hold",
                        every_op_kind_should_have_a_class_the_trace_can_hold);
}
