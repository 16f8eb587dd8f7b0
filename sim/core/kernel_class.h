/* kernel_class.h — which of the model's op classes a GPU kernel of a
 * PyTorch profiler trace belongs to, from its name alone. One static table
 * (kernel_class.c) maps name patterns to classes; a trace is compared with
 * a prediction class by class, so the classes are the ones the model costs
 * (sim/core/op.h kinds), merged where a kernel name cannot tell them apart. */
#ifndef XS_KERNEL_CLASS_H
#define XS_KERNEL_CLASS_H

/* The classes a trace is summed into. GEMM and batched GEMM are one class
 * (cuBLAS runs both with the same kernels), so are layout copies and dtype
 * casts (PyTorch runs both as copy kernels). XS_KC_OTHER holds kernels the
 * table does not know and work the model does not cost (host <-> device
 * copies, convolutions): it is reported, never compared. */
typedef enum {
    XS_KC_GEMM,
    XS_KC_ATTENTION,
    XS_KC_SOFTMAX,
    XS_KC_NORM,
    XS_KC_ELEMENTWISE,
    XS_KC_COPY,
    XS_KC_REDUCE,
    XS_KC_EMBED,
    XS_KC_LOSS,
    XS_KC_OPTIMIZER,
    XS_KC_COMM,
    XS_KC_OTHER,
    XS_KC_COUNT
} xs_kclass;

/* "gemm", "attention", ..., "other"; "?" out of range. */
const char *xs_kclass_name(int c);

/* The class of a GPU activity from its name as torch.profiler writes it
 * (demangled C++ kernel names, cuBLAS/cuDNN/NCCL names, "Memcpy DtoD (Device
 * -> Device)", "Memset (Device)"). First matching rule of the table wins;
 * XS_KC_OTHER when none matches. */
int xs_kclass_of_kernel(const char *name);

/* The class the model's op kind (xs_op_kind) is compared in. */
int xs_kclass_of_op(int op_kind);

#endif
