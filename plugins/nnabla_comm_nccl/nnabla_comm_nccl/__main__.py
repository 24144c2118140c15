"""``python -m nnabla_comm_nccl``: whether the NCCL communicator can run here, and why not."""
import sys

from . import __version__, available

ok, detail = available()
print(f"nnabla-comm-nccl {__version__}: {'available' if ok else 'unavailable'}: {detail}")
sys.exit(0 if ok else 1)
