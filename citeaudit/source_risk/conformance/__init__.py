"""The conformance suite of the source-risk audit specification (docs/references.md): fixtures, an
oracle kept apart, baselines, mutations, runner.

Every count it reports is computed by running this implementation (validation SQL, sealing,
R_O SQL, current view) over generated records; none is written into the code.
"""
