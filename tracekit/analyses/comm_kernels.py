"""The data table of what counts as communication: one row per (pattern, library, kind).

:data:`COMM_RULES` is read in order and the first row that matches a GPU kernel makes it
communication (:mod:`tracekit.analyses.classify` applies it; the ``comm_rules`` table reports,
per rank, which row took which kernels). A row looks at one of three things:

- ``kernel``: the kernel's name (case-insensitive regex search);
- ``op_id``: the CPU op that launched it, linked by the profiler's External id (the kernel's own,
  else its launch call's);
- ``op_span``: any CPU op or ``record_function`` range on the launching thread that encloses the
  launch, at any depth (kernels launched before the window match by External id instead).

Rows are added by name pattern only where the name says what the kernel does: DeepEP's
``get_dispatch_layout`` (a local layout computation) is not communication, and the bare
``dispatch(F)`` / ``combine(B)`` ranges of DeepSeek's trainer are not a rule either, because they
also enclose FP8 casts and that layout kernel (2 of the 6 kernels under them in the public
DeepSeek-V3 training trace are compute). A user adds rows with ``--comm-kernel REGEX``
(:func:`with_user_patterns`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CommRule:
    """One row: ``rule`` (the family reported in ``comm_rules``: ``nccl_kernel``, ``collective_op``,
    ``custom_kernel``, ``custom_op``, ``user_pattern``), what it looks at (``by``: ``kernel``, ``op_id``,
    ``op_span``), its regex, the ``library`` that launches such kernels and the ``kind`` of communication."""

    rule: str
    by: str
    pattern: str
    library: str
    kind: str


#: DeepEP's communication namespaces: ``deep_ep::intranode::``, ``deep_ep::internode::``,
#: ``deep_ep::internode_ll::`` (open-source DeepEP), ``dpsk::ep::internode::`` (DeepSeek's own build),
#: ``ep::intranode::``; not ``deep_ep::layout::`` (the local ``get_dispatch_layout``)
DEEPEP_NS = r"\b(?:deep_)?ep::(?:intra|inter)node(?:_ll)?::"
#: CPU ops whose launches are collectives (matched by External id)
COLLECTIVE_OP_PATTERN = r"^(?:record_param_comms$|c10d::|_c10d_functional::|c10d_functional::|nccl:|gloo:)"

COMM_RULES: tuple[CommRule, ...] = (
    CommRule("nccl_kernel", "kernel", r"^(?:nccl|rccl)", "NCCL / RCCL", "collective or send/recv"),
    CommRule("collective_op", "op_id", COLLECTIVE_OP_PATTERN, "torch.distributed (c10d)", "collective or send/recv"),
    CommRule("custom_kernel", "kernel", DEEPEP_NS + r"(?:notify|cached_notify)\w*", "DeepEP",
             "notify (all-to-all layout exchange)"),
    CommRule("custom_kernel", "kernel", DEEPEP_NS + r"dispatch\b", "DeepEP", "dispatch (all-to-all)"),
    CommRule("custom_kernel", "kernel", DEEPEP_NS + r"combine\b", "DeepEP", "combine (all-to-all)"),
    CommRule("custom_kernel", "kernel", DEEPEP_NS + r"\w+", "DeepEP", "barrier / buffer clean"),
    CommRule("custom_kernel", "kernel", r"cross_device_reduce", "vLLM custom all-reduce", "all_reduce"),
    CommRule("custom_kernel", "kernel", r"quickreduce|allreduce_prototype", "vLLM quick all-reduce (ROCm)",
             "all_reduce"),
    CommRule("custom_kernel", "kernel", r"allreduce_fusion_kernel", "TensorRT-LLM / FlashInfer all-reduce fusion",
             "all_reduce"),
    CommRule("custom_kernel", "kernel", r"one_shot_all_reduce|two_shot_all_reduce|multimem_",
             "torch SymmetricMemory", "all_reduce / all_gather"),
    CommRule("custom_kernel", "kernel", r"mscclpp", "MSCCL++", "collective"),
    CommRule("custom_kernel", "kernel", r"nvshmem", "NVSHMEM", "one-sided put/get or collective"),
    CommRule("custom_op", "op_span",
             r"^(?:vllm::(?:inplace_|outplace_)?(?:all_reduce|all_gather|reduce_scatter|all_to_all)|_C_custom_ar::)",
             "vLLM custom ops", "collective"),
    CommRule("custom_op", "op_span", r"^symm_mem::(?!fused)", "torch SymmetricMemory ops", "collective"),
    CommRule("custom_op", "op_span",
             r"^deep_?ep|\bBuffer(?:\.|::)(?:low_latency_|intranode_|internode_)?(?:dispatch|combine)$",
             "DeepEP Buffer methods", "dispatch / combine (all-to-all)"),
    CommRule("custom_op", "op_span", r"^nvshmem", "NVSHMEM host calls", "one-sided put/get or collective"),
)

USER_LIBRARY, USER_KIND = "user (--comm-kernel)", "user pattern"


def with_user_patterns(user_pattern: str | None) -> tuple[CommRule, ...]:
    """:data:`COMM_RULES` with the user's regex (``--comm-kernel`` / ``--comm-pattern``; several are
    joined into one alternation) appended as the last row, if any."""
    if not user_pattern:
        return COMM_RULES
    return (*COMM_RULES, CommRule("user_pattern", "kernel", user_pattern, USER_LIBRARY, USER_KIND))


def join_patterns(patterns: tuple[str, ...] | list[str]) -> str | None:
    """Several user regexes as one (``(?:a)|(?:b)``); one as itself; none as None."""
    ps = [p for p in patterns if p]
    if not ps:
        return None
    return ps[0] if len(ps) == 1 else "|".join(f"(?:{p})" for p in ps)


def markdown_table() -> str:
    """The table as Markdown, for the docs (``docs/communication.md`` embeds it; a test keeps them equal)."""
    rows = ["| # | rule | looks at | pattern | library | kind |", "|---|---|---|---|---|---|"]
    for i, r in enumerate(COMM_RULES, 1):
        pat = r.pattern.replace("|", "\\|")
        rows.append(f"| {i} | `{r.rule}` | {r.by} | `{pat}` | {r.library} | {r.kind} |")
    rows.append(f"| {len(COMM_RULES) + 1} | `user_pattern` | kernel | `--comm-kernel REGEX` | {USER_LIBRARY} "
                f"| {USER_KIND} |")
    return "\n".join(rows)
