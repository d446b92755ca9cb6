"""Python client of the frictionbench REST API (``bench serve``).

Runs, their specs and results, their samples as pandas DataFrames with units, submissions,
parameter sets and the live sample stream. Samples come from the Parquet export, which
carries each column's unit and the run record; the DataFrame has the CSV export's columns.
"""

from .client import Client, FrictionbenchError, Run

__all__ = ["Client", "FrictionbenchError", "Run"]
__version__ = "0.1.0"
