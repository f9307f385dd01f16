"""Analyses: one module per question, each ``run(release, options) -> Result``.

``release`` is the one release view (:class:`arbwb.io.release.Release`); options are one frozen
value per analysis (e.g. :class:`arbwb.analysis.result.Resampling`); a result is a frozen
dataclass of frames and key numbers that :meth:`arbwb.report.record.Recorder.record_all` writes.
Notebooks, ``arbwb report`` and the CLI commands call the same ``run`` functions.
"""
