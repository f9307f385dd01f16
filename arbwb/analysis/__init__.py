"""Analyses: one module per question, each ``run(release, options) -> Result`` (a frozen
dataclass of frames and key numbers), called alike by notebooks, ``arbwb report`` and the CLI.
"""
