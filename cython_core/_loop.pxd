# The parts every compiled block loop is written with, cimported in one line:
#
#     from kbench.cython_core._loop cimport *
#
# The loop's calling convention and its checked arrays (kbench.learners.expansion;
# ExpansionArrays, _expansion_arrays), its rows dense or CSR (BlockRows, LoopRows, _loop_rows),
# the kernel row, k(x, x) and scores of row i (_row_at, _self_at, _scores_at), of a stored row
# (_stored_row_at), a row written into or moved within the store (_store_at, _move_at), the
# stop when the store is full (_store_full), a scratch buffer (_doubles), a grown state array
# (_grown) and the sums (_dot; _expansion, one per output column). A loop that needs more
# (the CSR blocks' merges, a kernel kind) cimports it from its own module.
from kbench.cython_core._expansion cimport (
    ExpansionArrays, _doubles, _expansion_arrays, _grown, _store_full,
)
from kbench.cython_core._kernels cimport _dot, _expansion
from kbench.cython_core._sparse cimport (
    BlockRows, LoopRows, _loop_rows, _move_at, _row_at, _scores_at, _self_at, _store_at,
    _stored_row_at,
)
