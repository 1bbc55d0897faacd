"""Pipelines the notebooks call. Each returns tidy pandas DataFrames or small dataclasses; no plotting here."""
