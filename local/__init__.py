"""The local stack (``make run``) and the template reading that the tests share with it.

One BLAS thread: the embedded DynamoDB's vector search (``local/moto_vectors.py``) imports numpy before the
stack's ``local:minilm`` model is built, so the model's own default (``agent_memory/providers/minilm.py``)
comes too late here, and OpenBLAS reads it only when numpy is first imported. With a thread per core, its
threads contend on a busy machine: the model's eight reference sentences took 4 to 11 s instead of 0.5 s.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
