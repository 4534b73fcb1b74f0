"""Support: what people (and validated graders) judged. Annotation rows are mapped through the
codebook (bad rows rejected with reasons), adjudicated by majority (a tie is unresolved and
queued), aggregated over atoms, and measured for agreement. Writes ``support_judgments``,
``rejected_annotations``, ``support_labels``, ``review_queue`` and ``annotation_agreement``.
"""
