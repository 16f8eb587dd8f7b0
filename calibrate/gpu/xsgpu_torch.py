"""What both PyTorch scripts of the kit do first: find the GPU, name it as
xpusim does, and spell the provenance every row and trace carries."""

import os
import sys
import time

import torch

from xsgpu_common import device_id


def open_device(script, out):
    """(xpusim device id, provenance) of GPU 0, with out created; None when
    there is no CUDA device (the caller then measures nothing)."""
    if not torch.cuda.is_available():
        print(f"{script}: no CUDA device; nothing measured", file=sys.stderr)
        return None
    os.makedirs(out, exist_ok=True)
    p = torch.cuda.get_device_properties(0)
    source = (f"xpusim calibrate/gpu/{script}; {p.name} ({p.multi_processor_count} SMs); "
              f"torch {torch.__version__}, CUDA {torch.version.cuda}; "
              f"{time.strftime('%Y-%m-%d', time.gmtime())}")
    print(source, flush=True)
    return device_id(p.name) or "unknown", source
