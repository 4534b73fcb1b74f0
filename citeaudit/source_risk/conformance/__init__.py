"""Seed 000 §IV conformance suite: fixtures, an oracle kept apart, baselines, mutations, runner.

Every count it reports is computed by running this implementation (validation SQL, sealing,
R_O SQL, current view) over generated records; none is written into the code.
"""
