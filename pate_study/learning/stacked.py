"""``N`` networks held as one: the two stacked models the training loop (:mod:`pate_study.learning.training`) runs.

Both implement the same small interface: ``params()`` / ``buffers()`` give the initial stacked tensors
(leading dimension ``N``, one slice per teacher), ``source(X)`` turns data into what ``forward`` reads,
and ``forward(params, buffers, source, rows, training=..., mix=...)`` returns logits ``[N, B, k]``
for per-teacher rows ``rows: [N, B]`` (or the same rows ``[B]`` for every teacher).

* :class:`StackedMLP` -- multilayer perceptrons as explicit stacked weights ``W_l: [N, in, out]``,
  ``b_l: [N, 1, out]``; a step for all teachers is a few ``torch.baddbmm`` calls. With sparse input
  (TF-IDF) the first layer is ``torch.nn.functional.embedding_bag`` over each row's non-zeros
  (``nnz x out`` work instead of ``in x out``), which no ``vmap`` of ``nn.Linear`` can express. This
  is the path of the ECG and web studies, kept operation for operation as before the restructuring
  (same seeds -> same votes; ``tests/learning/test_legacy_votes.py``).
* :class:`StackedModule` -- any ``nn.Module`` (log-Mel ResNet/VGG, the embedding MLP): parameters and
  buffers stacked with ``torch.func.stack_module_state`` and one ``vmap``-ed ``functional_call`` per
  step (BatchNorm running statistics are per-teacher buffers; dropout masks differ per teacher).
  Two things only a GPU showed (H100, 2026-11-22), both handled here: under CUDA bf16 autocast,
  ``vmap``-ed BatchNorm refuses bf16 input with float32 running statistics, so BatchNorm runs in float32
  (its input is cast up; the usual "keep BatchNorm in fp32" of mixed precision); and a ``vmap``-ed
  convolution over ``N`` teachers is one grouped convolution whose tensors can pass 2^31 elements (VGG on
  1001 x 64 log-Mel, 10 teachers of batch 64), which CUDA's kernels refuse, so the teachers are run in
  the fewest chunks that keep every activation under that limit (same arithmetic per teacher).

Why two and not one ``vmap`` for everything: the explicit MLP reaches 65-69% of the CPU matmul peak and
has the sparse first layer (benchmarks/README.md); ``vmap`` is what makes an arbitrary module stackable.
The loop around them -- sampling, mixup, loss, Adam, evaluation, checkpoint selection -- is one
(:func:`pate_study.learning.training.train_stacked`), for ``N`` teachers and for a single model (``N = 1``).

Mixup (Muschiol 2021 §4.4.3) mixes inputs, ``x = b x_i + (1-b) x_{i+1}``. In :class:`StackedMLP` it is
applied to the first layer's output, which is exact because that layer is affine:
``W (b x_i + (1-b) x_{i+1}) + c = b (W x_i + c) + (1-b) (W x_{i+1} + c)``; so sparse input needs no
densifying. :class:`StackedModule` mixes the inputs themselves.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap

from pate_study.learning.samplers import mix_pairs

__all__ = [
    "StackedMLP",
    "StackedModule",
    "StackedPass",
    "init_stacked_params",
    "copy_module_to_meta",
    "as_inputs",
    "keep_batch_norm_float32",
    "largest_activation_elements",
    "teachers_per_call",
    "memory_format_option",
    "autocast_dtype_option",
    "compiled_option",
    "check_channels_last_threads",
    "stack_in_format",
    "MEMORY_FORMATS",
    "AUTOCAST_DTYPES",
]


# --------------------------------------------------------------------------------------------
# input rows: dense tensor or CSR on the device
# --------------------------------------------------------------------------------------------
@dataclass
class _Inputs:
    dense: torch.Tensor | None = None
    indptr: torch.Tensor | None = None
    indices: torch.Tensor | None = None
    values: torch.Tensor | None = None
    n_rows: int = 0
    n_cols: int = 0

    def rows_dense(self, idx: torch.Tensor) -> torch.Tensor:
        """Dense rows ``idx`` (any shape) -> ``[*idx.shape, n_cols]``."""
        if self.dense is not None:
            return torch.index_select(self.dense, 0, idx.reshape(-1)).view(*idx.shape, self.n_cols)
        flat = idx.reshape(-1)
        cols, vals, offsets, lengths = self.gather(flat, None)
        out = torch.zeros(flat.numel(), self.n_cols, dtype=torch.float32, device=flat.device)
        row_of = torch.repeat_interleave(torch.arange(flat.numel(), device=flat.device), lengths)
        out[row_of, cols] = vals
        return out.view(*idx.shape, self.n_cols)

    def gather(self, rows: torch.Tensor, block: torch.Tensor | None):
        """Non-zeros of CSR ``rows``; column ids shifted by ``block * n_cols`` per row when given."""
        starts = self.indptr[rows]
        lengths = self.indptr[rows + 1] - starts
        offsets = torch.cumsum(lengths, 0) - lengths
        total = int(lengths.sum())
        pos = torch.repeat_interleave(starts - offsets, lengths, output_size=total) + torch.arange(
            total, device=rows.device
        )
        cols = self.indices[pos]
        if block is not None:
            cols = cols + torch.repeat_interleave(block * self.n_cols, lengths, output_size=total)
        return cols, self.values[pos], offsets, lengths


def as_inputs(X: Any, n_features: int, sparse: bool, device: torch.device, name: str = "X") -> _Inputs:
    """``X`` (numpy, torch or scipy.sparse, ``[n, n_features]``) as dense rows or CSR on ``device``."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        shape = X.shape
    else:
        if isinstance(X, torch.Tensor):
            X = X.detach().cpu().numpy()
        X = np.asarray(X)
        shape = X.shape
    if len(shape) != 2 or shape[1] != n_features:
        raise ValueError(f"{name}: expected a 2-d array with {n_features} columns, got shape {shape}")
    if sparse:
        csr = sp.csr_matrix(X, dtype=np.float32)
        csr.sort_indices()
        return _Inputs(
            indptr=torch.as_tensor(csr.indptr.astype(np.int64), device=device),
            indices=torch.as_tensor(csr.indices.astype(np.int64), device=device),
            values=torch.as_tensor(csr.data, device=device),
            n_rows=shape[0],
            n_cols=shape[1],
        )
    dense = X.toarray() if sp.issparse(X) else X
    dense = torch.as_tensor(np.ascontiguousarray(dense, dtype=np.float32), device=device)
    if not torch.isfinite(dense).all():
        raise ValueError(f"{name}: contains NaN or infinite values")
    return _Inputs(dense=dense, n_rows=shape[0], n_cols=shape[1])


# --------------------------------------------------------------------------------------------
# the stacked MLP
# --------------------------------------------------------------------------------------------
def init_stacked_params(
    layer_sizes: Sequence[int] | Any, seeds: np.ndarray
) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Stacked initial weights ``[N, in, out]`` and biases ``[N, 1, out]``.

    ``layer_sizes``: ``(in, *hidden, out)`` or an object with ``layer_sizes`` (an ``EnsembleConfig``).
    Each teacher is drawn with its own ``torch.Generator`` (init seed ``seeds[i, 0]``) from torch's
    default ``nn.Linear`` initialisation, U(-1/sqrt(in), 1/sqrt(in)) for weights and biases.
    """
    sizes = tuple(getattr(layer_sizes, "layer_sizes", layer_sizes))
    n = seeds.shape[0]
    weights = [torch.empty(n, a, b) for a, b in zip(sizes[:-1], sizes[1:])]
    biases = [torch.empty(n, 1, b) for b in sizes[1:]]
    for i in range(n):
        g = torch.Generator().manual_seed(int(seeds[i, 0]))
        for W, b in zip(weights, biases):
            bound = 1.0 / float(np.sqrt(W.shape[1]))
            W[i] = (torch.rand(W.shape[1:], generator=g) * 2 - 1) * bound
            b[i] = (torch.rand(b.shape[1:], generator=g) * 2 - 1) * bound
    return weights, biases


def first_layer(inputs: _Inputs, idx: torch.Tensor, W: torch.Tensor, b: torch.Tensor, sparse: bool) -> torch.Tensor:
    """First layer for teacher batches ``idx: [N, B]`` -> ``[N, B, out]``."""
    n, bsz = idx.shape
    if not sparse:
        return torch.baddbmm(b, inputs.rows_dense(idx), W)
    block = torch.arange(n, device=idx.device).repeat_interleave(bsz)
    cols, vals, offsets, _ = inputs.gather(idx.reshape(-1), block)
    h = F.embedding_bag(
        cols, W.reshape(n * W.shape[1], W.shape[2]), offsets, mode="sum", per_sample_weights=vals.to(W.dtype)
    )
    # Out of place on purpose: an in-place add on this view makes autograd record CopySlices and
    # clone the whole [N*B, out] gradient in the backward (measured: 25% of a sparse step).
    return h.view(n, bsz, -1) + b


def hidden_layers(
    h: torch.Tensor,
    weights: Sequence[torch.Tensor],
    biases: Sequence[torch.Tensor],
    dropout: float = 0.0,
    generator: torch.Generator | None = None,
    keep: Sequence[torch.Tensor] | None = None,
) -> torch.Tensor:
    """Remaining layers: ReLU (and dropout) after each hidden layer, ``baddbmm`` for the linear maps. Dropout's
    keep-masks are drawn from ``generator``, or given in ``keep`` (one per layer, drawn beforehand by
    :meth:`StackedMLP.dropout_masks`: the same draws, for a compiled step, which cannot take a generator)."""
    for i, (W, b) in enumerate(zip(weights, biases)):
        h = torch.relu_(h)  # h is always a fresh intermediate; in place saves an allocation
        if dropout > 0 and (generator is not None or keep is not None):
            mask = keep[i] if keep is not None else torch.rand(h.shape, generator=generator, device=h.device) >= dropout
            h = h * mask / (1.0 - dropout)
        h = torch.baddbmm(b, h, W)
    return h


class StackedMLP:
    """``N`` MLPs ``layer_sizes[0] -> ... -> layer_sizes[-1]`` with ReLU (and dropout) between layers.

    Teacher ``i`` is initialised from ``seeds[i, 0]``; dropout masks come from one generator for the
    whole stack seeded with ``seeds[0, 2]`` (so a stack and a loop of single models agree only for
    ``dropout=0``). ``sparse_input``: training rows are read as CSR and the first layer runs through
    ``embedding_bag``.
    """

    def __init__(
        self,
        layer_sizes: Sequence[int],
        seeds: np.ndarray,
        *,
        dropout: float = 0.0,
        sparse_input: bool = False,
        device: torch.device | str = "cpu",
    ) -> None:
        self.layer_sizes = tuple(int(s) for s in layer_sizes)
        self.seeds = np.asarray(seeds)
        self.dropout = float(dropout)
        self.sparse_input = bool(sparse_input)
        self.device = torch.device(device)
        self.n_layers = len(self.layer_sizes) - 1
        self._generator = (
            torch.Generator(device=self.device).manual_seed(int(self.seeds[0, 2])) if self.dropout > 0 else None
        )

    @property
    def n_outputs(self) -> int:
        return self.layer_sizes[-1]

    def params(self) -> list[torch.Tensor]:
        """Initial ``[W_1..W_L, b_1..b_L]``."""
        W, b = init_stacked_params(self.layer_sizes, self.seeds)
        return [p.to(self.device) for p in (*W, *b)]

    def buffers(self) -> list[torch.Tensor]:
        return []

    def source(self, X: Any, name: str = "X", sparse: bool | None = None) -> _Inputs:
        return as_inputs(X, self.layer_sizes[0], self.sparse_input if sparse is None else sparse, self.device, name)

    def set_training(self, training: bool) -> None:  # no mode-dependent layers besides dropout
        pass

    def dropout_masks(self, n: int, batch: int) -> list[torch.Tensor] | None:
        """The keep-masks :meth:`forward` would draw for a training batch ``[n, batch]``: one per hidden layer, in
        its order, from the same generator (passing them as ``keep`` gives the same dropout); None without dropout."""
        if self._generator is None:
            return None
        return [
            torch.rand((n, batch, width), generator=self._generator, device=self.device) >= self.dropout
            for width in self.layer_sizes[1:-1]
        ]

    def forward(
        self,
        params: Sequence[torch.Tensor],
        buffers: Sequence[torch.Tensor],
        source: _Inputs,
        rows: torch.Tensor,
        *,
        training: bool,
        mix: torch.Tensor | None = None,
        keep: Sequence[torch.Tensor] | None = None,
    ) -> torch.Tensor:
        Ws, bs = params[: self.n_layers], params[self.n_layers :]
        if rows.dim() == 1:  # the same rows for every teacher (queries)
            x = source.dense[rows] if source.dense is not None else source.rows_dense(rows)
            # the bias in place: the product is a fresh [N, B, out] intermediate (512 MB for 250 web teachers x 1,000
            # queries); a second one for the sum cost ~8% of a query, same values
            h = torch.matmul(x.unsqueeze(0), Ws[0]).add_(bs[0])
        else:
            h = first_layer(source, rows, Ws[0], bs[0], source.dense is None)
        if mix is not None:
            h = mix_pairs(h, mix)
        return hidden_layers(h, Ws[1:], bs[1:], self.dropout if training else 0.0, self._generator, keep)


# --------------------------------------------------------------------------------------------
# any nn.Module, stacked with torch.func
# --------------------------------------------------------------------------------------------
def copy_module_to_meta(module: torch.nn.Module) -> torch.nn.Module:
    """Storage-free copy of ``module``'s architecture (for ``torch.func.functional_call``)."""
    return copy.deepcopy(module).to("meta")


#: CUDA kernels index with 32-bit integers: no tensor a (grouped) convolution reads or writes may hold more.
MAX_KERNEL_ELEMENTS = 2**31 - 1


def _batch_norm_input_to_float32(module: torch.nn.Module, args: tuple) -> tuple:
    """Forward pre-hook: BatchNorm's input cast to float32, so that under bf16 autocast it runs in float32
    against its float32 running statistics (``vmap``-ed CUDA BatchNorm refuses the mixed pair)."""
    return tuple(a.float() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)


def keep_batch_norm_float32(module: torch.nn.Module) -> int:
    """Register :func:`_batch_norm_input_to_float32` on every BatchNorm layer of ``module``; returns how many."""
    layers = [m for m in module.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in layers:
        m.register_forward_pre_hook(_batch_norm_input_to_float32)
    return len(layers)


def largest_activation_elements(meta_module: torch.nn.Module, input_shape: Sequence[int]) -> int:
    """Elements of the largest input or output of any submodule of ``meta_module`` (a storage-free copy,
    :func:`copy_module_to_meta`) for one input batch of ``input_shape``: traced on the meta device, so free."""
    largest = [0]

    def record(_module, args, output):
        for t in (*args, output):
            if isinstance(t, torch.Tensor):
                largest[0] = max(largest[0], t.numel())

    hooks = [m.register_forward_hook(record) for m in meta_module.modules()]
    try:
        with torch.no_grad():
            meta_module(torch.empty(tuple(input_shape), device="meta"))
    finally:
        for h in hooks:
            h.remove()
    return largest[0]


def teachers_per_call(per_teacher_elements: int, n_teachers: int, limit: int = MAX_KERNEL_ELEMENTS) -> int:
    """How many teachers one ``vmap`` call may hold so that its largest activation,
    ``teachers x per_teacher_elements``, stays within ``limit`` (at least 1, at most ``n_teachers``;
    ``per_teacher_elements = 0``: unknown, all of them)."""
    if per_teacher_elements <= 0:
        return int(n_teachers)
    return int(min(n_teachers, max(1, limit // int(per_teacher_elements))))


# --------------------------------------------------------------------------------------------
# speed options of the stacked module: memory format, autocast dtype, compilation
# --------------------------------------------------------------------------------------------
#: ``memory_format`` values: torch's default (NCHW) and channels-last (NHWC) convolution layout
#: (torch.channels_last, "(beta) Channels Last Memory Format in PyTorch" tutorial)
MEMORY_FORMATS = {"contiguous": torch.contiguous_format, "channels_last": torch.channels_last}
#: ``autocast_dtype`` values: None (no autocast of the module's own) or bfloat16 (``torch.autocast``)
AUTOCAST_DTYPES = {None: None, "bfloat16": torch.bfloat16}


def memory_format_option(value: str) -> torch.memory_format:
    """``memory_format`` -> :class:`torch.memory_format`: "contiguous" (default, NCHW) or "channels_last" (the
    4-d weights held NHWC, so that oneDNN and cuDNN pick their channels-last convolutions: torch docs, "Channels
    Last Memory Format": ``model.to(memory_format=torch.channels_last)``)."""
    if not isinstance(value, str) or value not in MEMORY_FORMATS:
        raise ValueError(f"memory_format={value!r}: expected one of {sorted(MEMORY_FORMATS)}")
    return MEMORY_FORMATS[value]


def autocast_dtype_option(value: str | None) -> torch.dtype | None:
    """``autocast_dtype`` -> dtype: None (default: no autocast of the module's own; the training loop's
    bfloat16 autocast still applies on CUDA) or "bfloat16" (the forward under ``torch.autocast(device_type,
    dtype=torch.bfloat16)`` on any device, CPU included: torch docs, "Automatic Mixed Precision package",
    CPU autocast ops)."""
    if value is not None and (not isinstance(value, str) or value not in AUTOCAST_DTYPES):
        raise ValueError(f"autocast_dtype={value!r}: expected None or 'bfloat16'")
    return AUTOCAST_DTYPES[value]


def check_channels_last_threads(memory_format: torch.memory_format, device: torch.device) -> None:
    """Refuse channels-last weights on the CPU when torch runs one thread: there torch 2.13's oneDNN (mkldnn)
    channels-last convolution corrupts the heap in training (a resnet18 of :func:`~.models.logmel_model` at width / 16
    on 8 clips of 16 x 64 aborts in its backward with "corrupted double-linked list"; 64 x 64 and 200 x 64 clips too;
    with ``torch.backends.mkldnn.enabled = False`` or two threads it runs clean under ``MALLOC_CHECK_=3``). A
    one-line ValueError naming ``memory_format`` and the ways out."""
    if memory_format is torch.channels_last and device.type == "cpu" and torch.get_num_threads() == 1:
        raise ValueError(
            "memory_format='channels_last': refused on the CPU with one torch thread (torch 2.13's oneDNN "
            "channels-last convolution corrupts memory there); use 'contiguous', or two or more threads "
            "(OMP_NUM_THREADS=2 or torch.set_num_threads(2))"
        )


def compiled_option(value: bool) -> bool:
    """``compiled``: a bool; True compiles the per-teacher functional forward (``vmap``-ed over the stack, or
    alone for one model) with ``torch.compile`` (torch docs, "torch.compile"; TorchInductor on CPU and CUDA)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"compiled={value!r}: expected True or False")
    return bool(value)


def stack_in_format(tensors: Sequence[torch.Tensor], memory_format: torch.memory_format) -> torch.Tensor:
    """Stack ``tensors`` (one per teacher) along a new leading dimension so that every slice ``[i]`` has
    ``memory_format``: for 4-d tensors in ``torch.channels_last`` each ``[out, in, kh, kw]`` slice is stored
    ``[out, kh, kw, in]`` (strides of ``t.contiguous(memory_format=torch.channels_last)``); ``torch.stack`` would
    give a plain contiguous 5-d tensor. Then the grouped convolution that ``vmap`` makes of a convolution over
    the stack (its weight ``[N * out, in, kh, kw]`` is a view merging the first two dimensions) is channels-last
    too. Other tensors (biases, linear weights) are stacked as ``torch.stack`` does."""
    tensors = [t.detach() for t in tensors]
    if memory_format is not torch.channels_last or tensors[0].dim() != 4:
        return torch.stack(tensors).clone()
    nhwc = torch.stack([t.permute(0, 2, 3, 1) for t in tensors])  # [N, out, kh, kw, in], contiguous
    return nhwc.permute(0, 1, 4, 2, 3)


@dataclass
class _TensorSource:
    data: torch.Tensor  # [n, ...] on the CPU (large log-Mel sets) or on the device

    @property
    def n_rows(self) -> int:
        return int(self.data.shape[0])


class StackedModule:
    """``N`` copies of one ``nn.Module`` architecture (initialised modules given, or ``model_fn`` called
    once per teacher with the global generator seeded by ``seeds[i, 0]``; dropout draws from the global
    generator seeded with ``seeds[0, 2]``). Inputs: any ``[n, ...]`` array the module takes batches of.
    Rows are moved to the device batch by batch when the data exceed ``device_bytes`` (log-Mel sets).

    Speed options (defaults: today's path, unchanged): ``memory_format="channels_last"`` stores every 4-d
    weight channels-last per teacher (:func:`stack_in_format`); ``autocast_dtype="bfloat16"`` runs the forward
    under ``torch.autocast`` with bfloat16 on the module's device (on CUDA the training loop does so already;
    this makes it a choice on the CPU; there CPU autocast reaches a single teacher's convolutions but not the
    grouped convolution of a ``vmap``-ed stack, which stays float32 -- checked in torch 2.13, whereas CUDA
    autocast does reach it); ``compiled=True`` compiles the functional forward with ``torch.compile``. Which of
    them pays is measured in ``benchmarks/bench_cnn.py``. (When teachers stop early the training loop indexes
    the stack, ``p[keep].clone()``, which keeps each slice's channels-last strides.)
    """

    def __init__(
        self,
        modules: Sequence[torch.nn.Module],
        seeds: np.ndarray,
        *,
        device: torch.device | str = "cpu",
        device_bytes: int = 1 << 30,
        memory_format: str = "contiguous",
        autocast_dtype: str | None = None,
        compiled: bool = False,
    ) -> None:

        if not modules:
            raise ValueError("modules: expected at least one nn.Module")
        self.seeds = np.asarray(seeds)
        self.device = torch.device(device)
        self.device_bytes = int(device_bytes)
        self._set_options(memory_format, autocast_dtype, compiled)
        check_channels_last_threads(self.memory_format, self.device)
        mods = [m.to(self.device) for m in modules]
        params, buffers = stack_module_state(mods)
        self.base = copy_module_to_meta(mods[0])
        self._guard_base()
        self.param_names, self.buffer_names = list(params), list(buffers)
        self._params = [
            stack_in_format([m.get_parameter(k) for m in mods], self.memory_format)
            if self.memory_format is torch.channels_last
            else params[k].detach().clone()
            for k in self.param_names
        ]
        self._buffers = [buffers[k].detach().clone() for k in self.buffer_names]
        torch.manual_seed(
            int(self.seeds[0, 2])
        )  # dropout (and other module randomness) draws from the global generator

    def _set_options(self, memory_format: str, autocast_dtype: str | None, compiled: bool) -> None:
        """The three speed options (class docstring), checked."""
        self.memory_format = memory_format_option(memory_format)
        self.autocast_dtype = autocast_dtype_option(autocast_dtype)
        self.compiled = compiled_option(compiled)
        self._compiled_calls: dict[tuple, Any] = {}

    @classmethod
    def from_stacked(
        cls,
        base: torch.nn.Module,
        params: dict[str, torch.Tensor],
        buffers: dict[str, torch.Tensor],
        device: torch.device | str = "cpu",
    ) -> StackedModule:
        """A stack from already stacked tensors (a trained ensemble), for inference."""
        self = cls.__new__(cls)
        self.seeds = np.zeros((1, 3), dtype=np.uint32)
        self.device = torch.device(device)
        self.device_bytes = 1 << 30
        self._set_options("contiguous", None, False)
        self.base = base
        self._guard_base()
        self.param_names, self.buffer_names = list(params), list(buffers)
        self._params = [params[k].to(self.device) for k in self.param_names]
        self._buffers = [buffers[k].to(self.device) for k in self.buffer_names]
        return self

    @classmethod
    def from_factory(cls, model_fn, seeds: np.ndarray, **kw: Any) -> StackedModule:
        models = []
        for s in np.asarray(seeds)[:, 0]:
            torch.manual_seed(int(s))  # nn.Module initialisers draw from the global generator
            models.append(model_fn())
        return cls(models, seeds, **kw)

    def _guard_base(self) -> None:
        """BatchNorm in float32 under autocast; the cache of teachers per ``vmap`` call (module docstring)."""
        keep_batch_norm_float32(self.base)
        self._chunks: dict[tuple, int] = {}
        self.max_kernel_elements = MAX_KERNEL_ELEMENTS

    def params(self) -> list[torch.Tensor]:
        return [p.clone() for p in self._params]

    def buffers(self) -> list[torch.Tensor]:
        return [b.clone() for b in self._buffers]

    def source(self, X: Any, name: str = "X") -> _TensorSource:
        if isinstance(X, torch.Tensor):
            data = X.detach().to(torch.float32)
        else:
            if sp.issparse(X):
                X = X.toarray()
            data = torch.as_tensor(np.asarray(X, dtype=np.float32))
        if data.dim() < 2:
            raise ValueError(f"{name}: expected an array [n, ...] of model inputs, got shape {tuple(data.shape)}")
        if self.device.type == "cpu" or data.numel() * 4 <= self.device_bytes:
            data = data.to(self.device)
        return _TensorSource(data)

    def set_training(self, training: bool) -> None:
        self.base.train(training)

    def forward(
        self,
        params: Sequence[torch.Tensor],
        buffers: Sequence[torch.Tensor],
        source: _TensorSource,
        rows: torch.Tensor,
        *,
        training: bool,
        mix: torch.Tensor | None = None,
    ) -> torch.Tensor:

        x = source.data[rows.to(source.data.device)].to(self.device)
        shared = rows.dim() == 1
        if mix is not None:
            x = mix_pairs(x, mix if not shared else mix[0], dim=0 if shared else 1)
        with self._autocast():
            return self._forward(params, buffers, x, shared, training)

    def _autocast(self):
        """``torch.autocast(device, autocast_dtype)`` when the option is set, else nothing (the loop's own
        autocast, :func:`pate_study.core.device.autocast`, still applies on CUDA)."""
        if self.autocast_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=self.autocast_dtype)

    def _call(self, shared: bool, training: bool, vmapped: bool):
        """The per-teacher functional forward ``(params, buffers, x) -> logits`` (``vmap``-ed over teachers
        when ``vmapped``), compiled with ``torch.compile`` when the option is on (one compiled function per
        kind of call, cached; the training flag is a guard of the compiled graph)."""
        key = (shared, training, vmapped)
        if key in self._compiled_calls:
            return self._compiled_calls[key]
        names_p, names_b = self.param_names, self.buffer_names

        def call(pp, bb, xx):
            return functional_call(self.base, (dict(zip(names_p, pp)), dict(zip(names_b, bb))), (xx,))

        f = (
            vmap(call, in_dims=(0, 0, None if shared else 0), randomness="different" if training else "error")
            if vmapped
            else call
        )
        if self.compiled:
            # static shapes: every StackedModule shares the code object of ``call``, so a second stack would
            # recompile it as dynamic-shaped, whose backward TorchInductor failed to compile (torch 2.13, CPU);
            # new shapes (evaluation batches) recompile, and past torch._dynamo.config.recompile_limit run eagerly
            f = torch.compile(f, dynamic=False)
        self._compiled_calls[key] = f
        return f

    def _forward(
        self,
        params: Sequence[torch.Tensor],
        buffers: Sequence[torch.Tensor],
        x: torch.Tensor,
        shared: bool,
        training: bool,
    ) -> torch.Tensor:
        if params and params[0].shape[0] == 1:  # one model (a student, the loop): no vmap, so any forward works,
            call = self._call(shared, training, vmapped=False)  # data-dependent
            single = call([p[0] for p in params], [b[0] for b in buffers], x if shared else x[0])  # control flow too
            return single.unsqueeze(0)
        f = self._call(shared, training, vmapped=True)
        n = params[0].shape[0] if params else 1
        k = self.teachers_per_call(tuple(x.shape if shared else x.shape[1:]), n)
        if k >= n:
            return f(list(params), list(buffers), x)
        chunks = [
            f([p[i : i + k] for p in params], [b[i : i + k] for b in buffers], x if shared else x[i : i + k])
            for i in range(0, n, k)
        ]  # buffers are views: BatchNorm's in-place updates reach the stack
        return torch.cat(chunks, dim=0)

    def teachers_per_call(self, batch_shape: tuple, n_teachers: int) -> int:
        """Teachers per ``vmap`` call for input batches of ``batch_shape`` (cached per shape):
        :func:`teachers_per_call` of :func:`largest_activation_elements`."""
        key = (batch_shape, n_teachers, self.max_kernel_elements)
        if key not in self._chunks:
            try:
                per_teacher = largest_activation_elements(self.base, batch_shape)
            except (RuntimeError, NotImplementedError, TypeError, ValueError):  # not traceable on meta tensors
                per_teacher = 0  # (data-dependent checks): one call, as before
            self._chunks[key] = teachers_per_call(per_teacher, n_teachers, self.max_kernel_elements)
        return self._chunks[key]


# --------------------------------------------------------------------------------------------
# a stacked model with the tensors its forward reads
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StackedPass:
    """A stacked model (:class:`StackedMLP` or :class:`StackedModule`) with the stacked parameters and buffers its
    ``forward`` reads (the interface of the module docstring): the three go together into every evaluation pass, the
    loop's (:func:`pate_study.learning.evaluation.evaluate_stacked`) and a trained ensemble's
    (:mod:`pate_study.learning.ensemble`)."""

    model: Any
    params: Sequence[torch.Tensor]
    buffers: Sequence[torch.Tensor]

    def teachers(self, start: int, stop: int) -> StackedPass:
        """Teachers ``start:stop`` only: the same model with those slices of every parameter and buffer."""
        return StackedPass(self.model, [t[start:stop] for t in self.params], [t[start:stop] for t in self.buffers])

    def logits(self, source: Any, rows: torch.Tensor) -> torch.Tensor:
        """The model's evaluation-mode ``forward`` (``training=False``) on ``rows`` of ``source``: per-teacher rows
        ``[N, B]`` or the same rows ``[B]`` for every teacher -> logits ``[N, B, k]``."""
        return self.model.forward(self.params, self.buffers, source, rows, training=False)
