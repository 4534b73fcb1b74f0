"""Adapters that import real human-annotated citation data into citeaudit's raw layout.

``citeaudit import liu PATH --out DIR`` (Liu, Zhang & Liang 2023, ``intrinsic_halls.json``) and
``citeaudit import expertqa PATH --out DIR`` (ExpertQA ``*.jsonl``) write answers JSONL in the
contract of docs/inputs.md, support annotations CSV, the annotator registry and a codebook that maps
the datasets' labels, so ``citeaudit run --raw DIR`` runs the whole pipeline on them.
"""
